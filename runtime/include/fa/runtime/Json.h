//===- Json.h - the little JSON the manifests need --------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// A small reader for kernel manifests, so that the runtime depends on
// nothing but the C++ standard library and (at run time) libcuda.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_JSON_H
#define FA_RUNTIME_JSON_H

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fa {
namespace json {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  std::vector<Value> array;
  std::map<std::string, Value> object;

  /// The member `key` of an object, or null if absent.
  const Value *get(const std::string &key) const;
};

/// Parses `text`; false with a reason (and the offset) on bad JSON.
bool parse(const std::string &text, Value &out, std::string &error);

/// `text` as a JSON string literal.
std::string quote(const std::string &text);

} // namespace json
} // namespace fa

#endif // FA_RUNTIME_JSON_H
