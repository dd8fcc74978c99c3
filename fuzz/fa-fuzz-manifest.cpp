//===- fa-fuzz-manifest.cpp - libFuzzer target: kernel manifests ----------===//
//
// Part of fa-mlir.
//
// Feeds the bytes to fa::json::parse and to fa::Manifest::read, what fa-run
// and the C API do with a kernel's NAME.json. Manifest::read takes a path,
// so the bytes are written to a per-process file under $TMPDIR first (the
// runtime has no in-memory entry point; nothing here edits it). Any outcome
// but a crash or a sanitizer report is fine.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Json.h"
#include "fa/runtime/Kernel.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

/// The file the bytes go to: one per process, so parallel jobs do not share.
static const std::string &manifestPath() {
  static const std::string path = [] {
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/fa-fuzz-manifest." +
           std::to_string(getpid()) + ".json";
  }();
  return path;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024)
    return -1; // Real manifests are about 1 KB.
  std::string text(reinterpret_cast<const char *>(data), size);

  fa::json::Value value;
  std::string error;
  if (fa::json::parse(text, value, error))
    (void)fa::json::quote(value.kind == fa::json::Value::String ? value.string
                                                                 : text);

  const std::string &path = manifestPath();
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return 0;
  bool written = std::fwrite(data, 1, size, file) == size;
  written = std::fclose(file) == 0 && written;
  if (!written)
    return 0;
  fa::Manifest manifest;
  (void)fa::Manifest::read(path, manifest, error);
  std::remove(path.c_str());
  return 0;
}
