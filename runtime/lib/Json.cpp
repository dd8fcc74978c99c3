//===- Json.cpp - the little JSON the manifests need ----------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Json.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace fa::json;

const Value *Value::get(const std::string &key) const {
  if (kind != Object)
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

namespace {
class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  /// Nesting deeper than this is refused: the parser (and Value's
  /// destructor) recurse once per level, and no manifest nests past 3.
  static constexpr int kMaxDepth = 64;

  bool parseValue(Value &out) {
    if (depth >= kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth) +
                  " levels");
    ++depth;
    bool ok = parseValueAtDepth(out);
    --depth;
    return ok;
  }

  bool parseValueAtDepth(Value &out) {
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end");
    char c = text[pos];
    if (c == '{')
      return parseObject(out);
    if (c == '[')
      return parseArray(out);
    if (c == '"') {
      out.kind = Value::String;
      return parseString(out.string);
    }
    if (text.compare(pos, 4, "true") == 0) {
      pos += 4;
      out.kind = Value::Bool;
      out.boolean = true;
      return true;
    }
    if (text.compare(pos, 5, "false") == 0) {
      pos += 5;
      out.kind = Value::Bool;
      return true;
    }
    if (text.compare(pos, 4, "null") == 0) {
      pos += 4;
      out.kind = Value::Null;
      return true;
    }
    return parseNumber(out);
  }

  bool atEnd() {
    skipSpace();
    return pos == text.size();
  }
  std::string error;
  size_t pos = 0;

private:
  /// JSON's number grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
  /// checked before strtod (which would also take "nan", "inf" and hex);
  /// a number beyond double's range is refused, not turned into inf.
  bool parseNumber(Value &out) {
    size_t begin = pos, p = pos;
    auto digits = [&] {
      size_t start = p;
      while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p])))
        ++p;
      return p > start;
    };
    if (p < text.size() && text[p] == '-')
      ++p;
    if (p < text.size() && text[p] == '0')
      ++p;
    else if (!digits())
      return fail("unexpected character");
    if (p < text.size() && text[p] == '.') {
      ++p;
      if (!digits())
        return fail("bad number");
    }
    if (p < text.size() && (text[p] == 'e' || text[p] == 'E')) {
      ++p;
      if (p < text.size() && (text[p] == '+' || text[p] == '-'))
        ++p;
      if (!digits())
        return fail("bad number");
    }
    std::string literal = text.substr(begin, p - begin);
    errno = 0;
    double number = std::strtod(literal.c_str(), nullptr);
    if (!std::isfinite(number))
      return fail("number out of range");
    out.kind = Value::Number;
    out.number = number;
    pos = p;
    return true;
  }
  static bool isHex(char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  }
  int depth = 0;
  bool fail(const std::string &why) {
    error = why + " at offset " + std::to_string(pos);
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool expect(char c) {
    skipSpace();
    if (pos >= text.size() || text[pos] != c)
      return fail(std::string("expected '") + c + "'");
    ++pos;
    return true;
  }
  bool parseString(std::string &out) {
    if (!expect('"'))
      return false;
    out.clear();
    while (pos < text.size() && text[pos] != '"') {
      char c = text[pos++];
      if (c == '\\' && pos < text.size()) {
        char e = text[pos++];
        switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': // Manifests hold ASCII; keep the code point's low byte.
          if (pos + 4 > text.size() || !isHex(text[pos]) ||
              !isHex(text[pos + 1]) || !isHex(text[pos + 2]) ||
              !isHex(text[pos + 3]))
            return fail("bad \\u escape");
          out += static_cast<char>(std::strtol(text.substr(pos, 4).c_str(), nullptr, 16));
          pos += 4;
          break;
        default: out += e; break;
        }
      } else {
        out += c;
      }
    }
    return expect('"');
  }
  bool parseArray(Value &out) {
    out.kind = Value::Array;
    if (!expect('['))
      return false;
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      out.array.emplace_back();
      if (!parseValue(out.array.back()))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      return expect(']');
    }
  }
  bool parseObject(Value &out) {
    out.kind = Value::Object;
    if (!expect('{'))
      return false;
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      std::string key;
      skipSpace();
      if (!parseString(key) || !expect(':'))
        return false;
      // A repeated key would let the last one win unseen.
      if (out.object.count(key))
        return fail("duplicate key \"" + key + "\"");
      if (!parseValue(out.object[key]))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      return expect('}');
    }
  }
  const std::string &text;
};
} // namespace

bool fa::json::parse(const std::string &text, Value &out, std::string &error) {
  Parser parser(text);
  if (!parser.parseValue(out)) {
    error = parser.error;
    return false;
  }
  if (!parser.atEnd()) {
    error = "trailing characters at offset " + std::to_string(parser.pos);
    return false;
  }
  return true;
}

std::string fa::json::quote(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default: out += c;
    }
  }
  return out + "\"";
}
