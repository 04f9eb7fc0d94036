//! Compiles every `tests/c/*.c` against the committed header and the static library, under
//! AddressSanitizer and UndefinedBehaviorSanitizer, runs it, and requires exit status 0.
//!
//! The static library is built first with `cargo build -p replystream-ffi` (same profile as
//! this test). The C compiler is `$CC`, else `cc`. If AddressSanitizer cannot run here (some
//! sandboxes forbid its memory mappings or ptrace-based leak checking), the tests fall back
//! to UndefinedBehaviorSanitizer alone and say so on stderr.

use std::path::{Path, PathBuf};
use std::process::Command;

const WARNINGS: &[&str] = &["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"];
const ASAN: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
];
const UBSAN: &[&str] = &[
    "-fsanitize=undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
];
const LIBS: &[&str] = &["-lpthread", "-ldl", "-lm"];

fn ffi_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `target/<profile>`: this test binary lives in `target/<profile>/deps`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

fn build_static_lib() -> PathBuf {
    let dir = profile_dir();
    let profile = match dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_owned(),
        Some(name) => name.to_owned(),
        None => "dev".to_owned(),
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args(["build", "-p", "replystream-ffi", "--profile", &profile])
        .current_dir(ffi_dir())
        .status()
        .expect("run cargo build");
    assert!(status.success(), "cargo build -p replystream-ffi failed");
    let lib = dir.join("libreplystream_ffi.a");
    assert!(lib.exists(), "{} not found", lib.display());
    lib
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_owned())
}

/// Compiles `sources` (plus the library) into `out` with `sanitizers`; returns the
/// compiler's stderr on failure.
fn compile(sources: &[&Path], lib: &Path, out: &Path, sanitizers: &[&str]) -> Result<(), String> {
    let output = Command::new(cc())
        .args(WARNINGS)
        .args(sanitizers)
        .arg("-I")
        .arg(ffi_dir().join("include"))
        .arg("-I")
        .arg(ffi_dir().join("tests/c"))
        .args(sources)
        .arg(lib)
        .args(LIBS)
        .arg("-o")
        .arg(out)
        .output()
        .expect("run the C compiler");
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// Runs a compiled test; returns (success, stdout + stderr).
fn run(exe: &Path) -> (bool, String) {
    let output = Command::new(exe)
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=1:abort_on_error=0:halt_on_error=1",
        )
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        .output()
        .expect("run the C test");
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

/// The sanitizer flags to use: ASan+UBSan if a trivial ASan program builds and runs here,
/// else UBSan only.
fn sanitizers(work: &Path) -> &'static [&'static str] {
    let probe = work.join("asan_probe.c");
    std::fs::write(
        &probe,
        "#include <stdlib.h>\nint main(void) { char *p = malloc(8); p[0] = 0; int r = p[0]; \
         free(p); return r; }\n",
    )
    .unwrap();
    let exe = work.join("asan_probe");
    let ok = Command::new(cc())
        .args(ASAN)
        .arg(&probe)
        .arg("-o")
        .arg(&exe)
        .status()
        .is_ok_and(|s| s.success())
        && run(&exe).0;
    if ok {
        ASAN
    } else {
        eprintln!(
            "note: AddressSanitizer does not work in this environment; \
             the C tests run under UndefinedBehaviorSanitizer only"
        );
        UBSAN
    }
}

fn c_tests() -> Vec<PathBuf> {
    let mut tests: Vec<PathBuf> = std::fs::read_dir(ffi_dir().join("tests/c"))
        .expect("tests/c")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    tests.sort();
    tests
}

#[test]
fn c_tests_pass_under_sanitizers() {
    let lib = build_static_lib();
    let work = profile_dir().join("c-tests");
    std::fs::create_dir_all(&work).unwrap();
    let sanitizers = sanitizers(&work);

    let mut sources = c_tests();
    // The example must build too (and run: it is a short turn on a fake clock).
    sources.push(ffi_dir().join("examples/basic.c"));
    assert!(sources.len() >= 4, "expected the C tests and the example");

    let mut failures = Vec::new();
    for source in &sources {
        let name = source.file_stem().unwrap().to_string_lossy().into_owned();
        let exe = work.join(&name);
        if let Err(stderr) = compile(&[source], &lib, &exe, sanitizers) {
            failures.push(format!("{name}: does not compile:\n{stderr}"));
            continue;
        }
        let (ok, output) = run(&exe);
        if ok {
            eprint!("{output}");
        } else {
            failures.push(format!("{name}: failed:\n{output}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
