//===- ParseGuard.h - input text upstream MLIR's parser crashes on -*- C++ -*-===//
//
// Part of fa-mlir.
//
// Upstream MLIR 22's custom parsers of linalg.broadcast, linalg.transpose
// and linalg.reduce crash (SIGSEGV: a null attribute is stored after the
// failed parse) on a `dimensions = [...]` or `permutation = [...]` list they
// fail to read (anything but 64-bit integers and commas: a name, an
// overflowing integer, an empty item), and mlir-opt with them (docs/reliability.md, finding
// 4). The tools that read MLIR text (fa-opt, fa-compile, fa-run --input)
// and the fuzz target check it first, so such input gets one line and
// exit 2, not a crash.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_UTILS_PARSEGUARD_H
#define FA_DIALECT_FA_UTILS_PARSEGUARD_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace mlir {
namespace fa {

/// Whether `list` (between the brackets) is empty or 64-bit integers
/// separated by commas: what those parsers read without failing.
inline bool isIntegerList(llvm::StringRef list) {
  if (list.trim().empty())
    return true;
  llvm::SmallVector<llvm::StringRef> items;
  list.split(items, ',');
  for (llvm::StringRef item : items) {
    item = item.trim();
    bool negative = item.consume_front("-");
    item = item.ltrim();
    uint64_t magnitude;
    if (item.empty() || item.find_first_not_of("0123456789") != llvm::StringRef::npos ||
        item.getAsInteger(10, magnitude) ||
        magnitude > uint64_t(INT64_MAX) + (negative ? 1 : 0))
      return false;
  }
  return true;
}

/// The byte offset of the first `dimensions = ` / `permutation = ` in
/// `text` that the upstream custom parsers would fail to read (and crash
/// on): as a keyword of an op's custom form (not a name like %dimensions,
/// not an entry of an attribute dictionary, which the attribute parser
/// reads safely), followed by anything but `[`, 64-bit integers and `]`.
/// StringRef::npos if there is none.
inline size_t findUpstreamIntegerListHazard(llvm::StringRef text) {
  // The lexer skips NUL characters as it skips whitespace.
  constexpr llvm::StringRef kSpace(" \t\n\v\f\r\0", 7);
  auto isNameChar = [](char ch) {
    return llvm::isAlnum(ch) || llvm::StringRef("_$.%@#!^").contains(ch);
  };
  size_t first = llvm::StringRef::npos;
  for (llvm::StringRef key : {"dimensions", "permutation"}) {
    for (size_t at = text.find(key); at != llvm::StringRef::npos && at < first;
         at = text.find(key, at + 1)) {
      size_t end = at + key.size();
      if ((at > 0 && isNameChar(text[at - 1])) ||
          (end < text.size() && isNameChar(text[end])))
        continue;
      size_t lineStart = text.take_front(at).rfind('\n');
      lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
      if (text.slice(lineStart, at).contains("//"))
        continue; // in a comment
      llvm::StringRef before = text.take_front(at).rtrim(kSpace);
      if (before.ends_with("{") || before.ends_with(","))
        continue; // an attribute dictionary's entry
      llvm::StringRef rest = text.drop_front(end).ltrim(kSpace);
      if (!rest.consume_front("="))
        continue; // the parser stops at the missing '=' without crashing
      rest = rest.ltrim(kSpace);
      size_t close = rest.find(']');
      if (!rest.consume_front("[") || close == llvm::StringRef::npos ||
          !isIntegerList(rest.take_front(close - 1)))
        first = at;
    }
  }
  return first;
}

/// "NAME:LINE: ..." for the hazard at `offset` of `text`, or "" if none.
inline std::string describeUpstreamIntegerListHazard(llvm::StringRef name,
                                                     llvm::StringRef text) {
  size_t at = findUpstreamIntegerListHazard(text);
  if (at == llvm::StringRef::npos)
    return "";
  size_t line = text.take_front(at).count('\n') + 1;
  return name.str() + ":" + std::to_string(line) +
         ": a `dimensions` or `permutation` list that is not 64-bit integers "
         "(upstream MLIR 22's linalg parsers crash on it; refused)";
}

/// The text of `path` ("-": stdin) to parse, or null with one line in
/// `error`: the file cannot be read, or holds the hazard above.
inline std::unique_ptr<llvm::MemoryBuffer> readGuardedInput(llvm::StringRef path,
                                                            std::string &error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!text) {
    error = "cannot read " + path.str() + ": " + text.getError().message();
    return nullptr;
  }
  error = describeUpstreamIntegerListHazard(path, (*text)->getBuffer());
  return error.empty() ? std::move(*text) : nullptr;
}

} // namespace fa
} // namespace mlir

#endif // FA_DIALECT_FA_UTILS_PARSEGUARD_H
