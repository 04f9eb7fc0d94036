'use strict';
// The shared library's file name on this platform (shared by the loader and the build
// script, which must not load koffi).

function libraryFileName() {
  if (process.platform === 'darwin') return 'libreplystream_ffi.dylib';
  if (process.platform === 'win32') return 'replystream_ffi.dll';
  return 'libreplystream_ffi.so';
}

module.exports = { libraryFileName };
