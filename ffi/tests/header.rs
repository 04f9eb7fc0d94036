//! The committed C header must be what the pinned cbindgen generates from the sources.
//!
//! Regenerate it with `REPLYSTREAM_BLESS=1 cargo test -p replystream-ffi --test header`.

use std::path::Path;

#[test]
fn header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen could not generate the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);

    let path = dir.join("include/replystream.h");
    if std::env::var_os("REPLYSTREAM_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    if committed != generated {
        panic!(
            "ffi/include/replystream.h is out of date with ffi/src.\n\
             Regenerate it with:\n\n    \
             REPLYSTREAM_BLESS=1 cargo test -p replystream-ffi --test header\n\n\
             and commit the result."
        );
    }
}
