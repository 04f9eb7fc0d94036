//! The `replystream` binary end to end: `chunk` and `split` over the corpus in every metric,
//! checked against the text core's invariants from the outside (JSON lines only), and the
//! error paths (one line on stderr, exit code 2 for usage, 1 for runtime errors).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};

use replystream::{FenceMarker, LengthMetric};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_replystream");

/// Every corpus file; all of them are valid UTF-8.
const CORPUS: &[&str] = &[
    "code-heavy.md",
    "directives-and-thinking.md",
    "lists-tables.md",
    "no-breaks.md",
    "node-events.md",
    "node-readline.md",
    "openclaw-streaming-notes.md",
    "prose-paragraphs.md",
    "reasoning-stream-design.md",
    "silent-and-heartbeat.md",
    "silent-reply.md",
    "unclosed-fence.md",
    "unicode-mix.md",
];

/// A file of the repository's shared sample data (`tests/data/` at the workspace root).
fn data_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("tests")
        .join("data")
        .join(name)
}

fn data(name: &str) -> String {
    std::fs::read_to_string(data_path(name)).expect("corpus file")
}

/// One JSON line of output.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    text: String,
    sep: String,
    len: usize,
    start: usize,
    end: usize,
    fence_reopened: bool,
    fence_closed: bool,
    table_header_repeated: bool,
    /// Bytes of synthetic text at the start and at the end of `text`.
    head_len: usize,
    tail_len: usize,
    /// Inline delimiters reopened at the start, closed at the end.
    spans_reopened: bool,
    spans_closed: bool,
    /// Columns taken off the lines (a piece starting inside deep list-item code).
    dedent: usize,
    /// Quote markers kept before those columns (a deep fence of an item in a quote).
    dedent_quotes: usize,
}

impl Piece {
    fn from_json(line: &str) -> Piece {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let s = |k: &str| {
            v[k].as_str()
                .unwrap_or_else(|| panic!("{k} in {line}"))
                .to_owned()
        };
        let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {line}")) as usize;
        let b = |k: &str| v[k].as_bool().unwrap_or_else(|| panic!("{k} in {line}"));
        Piece {
            text: s("text"),
            sep: s("sep"),
            len: n("len"),
            start: n("start"),
            end: n("end"),
            fence_reopened: b("fence_reopened"),
            fence_closed: b("fence_closed"),
            table_header_repeated: b("table_header_repeated"),
            head_len: n("head_len"),
            tail_len: n("tail_len"),
            spans_reopened: b("spans_reopened"),
            spans_closed: b("spans_closed"),
            dedent: n("dedent"),
            dedent_quotes: n("dedent_quotes"),
        }
    }
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run replystream")
}

fn path_arg(name: &str) -> String {
    data_path(name).to_str().expect("UTF-8 path").to_owned()
}

/// Runs a subcommand that must succeed and returns its pieces.
fn pieces(args: &[&str]) -> Vec<Piece> {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    assert!(stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    stdout.lines().map(Piece::from_json).collect()
}

/// The fence left open at the end of `text`, walking its lines with the library's own
/// CommonMark fence rules.
fn open_fence_at_end(text: &str) -> Option<FenceMarker> {
    let mut open: Option<FenceMarker> = None;
    for line in text.split('\n') {
        open = match open {
            None => FenceMarker::parse_open(line),
            Some(marker) if marker.is_closed_by(line) => None,
            Some(marker) => Some(marker),
        };
    }
    open
}

/// Whether every non-blank line of `text` is a fence opening or closing line.
fn only_fence_lines(text: &str) -> bool {
    let mut open: Option<FenceMarker> = None;
    for line in text.split('\n') {
        if line.trim().is_empty() {
            continue;
        }
        match open {
            None => match FenceMarker::parse_open(line) {
                Some(marker) => open = Some(marker),
                None => return false,
            },
            Some(marker) if marker.is_closed_by(line) => open = None,
            Some(_) => return false,
        }
    }
    true
}

/// What a run is checked against.
struct Expect<'a> {
    label: String,
    source: &'a str,
    metric: LengthMetric,
    limit: usize,
    max_lines: Option<usize>,
}

/// The invariants of SPEC §3, §9 and §13 as seen through the JSON output.
fn check(expect: &Expect<'_>, pieces: &[Piece]) {
    let Expect {
        label,
        source,
        metric,
        limit,
        ..
    } = expect;
    if source.trim().is_empty() {
        assert!(pieces.is_empty(), "{label}: pieces from blank text");
        return;
    }
    assert!(!pieces.is_empty(), "{label}: no output");

    let mut cursor = 0;
    for (i, p) in pieces.iter().enumerate() {
        let at = format!("{label}: piece {i} ({}..{})", p.start, p.end);

        // Non-empty, within the limit, `len` honest.
        assert!(!p.text.trim().is_empty(), "{at}: empty");
        assert_eq!(p.len, metric.len(&p.text), "{at}: len field");
        assert!(p.len <= *limit, "{at}: {} > {limit} {metric}", p.len);
        if let Some(max_lines) = expect.max_lines {
            let lines = p.text.split('\n').count();
            assert!(lines <= max_lines, "{at}: {lines} lines > {max_lines}");
        }

        // Fences balanced (SPEC §13.2: a fence the source leaves open is closed in the last
        // piece), and never a piece of nothing but fence lines.
        assert_eq!(open_fence_at_end(&p.text), None, "{at}: unbalanced fence");
        assert!(!only_fence_lines(&p.text), "{at}: only fence lines");

        // The display text is the source range plus the synthetic fence lines.
        assert!(p.start <= p.end && p.end <= source.len(), "{at}: bad range");
        let mut body = p.text.as_str();
        if p.table_header_repeated {
            let mut lines = body.splitn(3, '\n');
            let (header, delimiter) = (lines.next().unwrap(), lines.next().unwrap_or(""));
            let head = format!("{header}\n{delimiter}\n");
            assert!(
                source[..p.start].contains(&head)
                    && delimiter.contains('-')
                    && delimiter.contains('|'),
                "{at}: bad repeated header {head:?}"
            );
            body = &body[head.len()..];
        }
        // Inline delimiters closed and reopened at a cut: only `*`, `_`, `~` and backticks.
        let delims = |t: &str| !t.is_empty() && t.bytes().all(|b| b"*_~`".contains(&b));
        if p.spans_reopened {
            assert!(
                delims(&body[..p.head_len]),
                "{at}: {:?}",
                &body[..p.head_len]
            );
            body = &body[p.head_len..];
        }
        if p.spans_closed {
            let cut = body.len() - p.tail_len;
            assert!(delims(&body[cut..]), "{at}: {:?}", &body[cut..]);
            body = &body[..cut];
        }
        if p.fence_reopened {
            let (first, rest) = body.split_once('\n').expect("reopened line");
            assert!(FenceMarker::parse_open(first).is_some(), "{at}: {first:?}");
            body = rest;
        }
        if p.fence_closed {
            let (rest, last_line) = body.rsplit_once('\n').expect("closing line");
            assert!(
                FenceMarker::parse_open(last_line).is_some_and(|m| m.is_closed_by(last_line)),
                "{at}: {last_line:?} is not a closing fence line"
            );
            body = rest;
        }
        // A piece starting inside deep list-item code shows its source de-indented.
        let first_line = (p.start == 0 || source.as_bytes()[p.start - 1] == b'\n')
            && (p.head_len == 0 || p.text[..p.head_len].ends_with('\n'));
        let d = containers::Dedent {
            cols: p.dedent,
            quotes: p.dedent_quotes,
        };
        let shown = containers::dedent_view(&source[p.start..p.end], d, first_line);
        assert_eq!(body, shown, "{at}: text vs source range");
        // The synthetic edges are stated exactly.
        assert_eq!(
            &p.text[p.head_len..p.text.len() - p.tail_len],
            shown,
            "{at}: head_len/tail_len"
        );

        // Nothing lost, nothing repeated: pieces and separators tile the source. Only blank
        // lines before the first piece and whitespace after the last may be left out.
        if i == 0 {
            assert!(
                source[..p.start].trim().is_empty(),
                "{at}: text before the first piece"
            );
        } else {
            assert_eq!(p.start, cursor, "{at}: gap or overlap");
        }
        assert!(p.sep.trim().is_empty(), "{at}: separator {:?}", p.sep);
        assert!(
            source[p.end..].starts_with(&p.sep),
            "{at}: separator {:?} is not the source text after the piece",
            p.sep
        );
        cursor = p.end + p.sep.len();
    }
    assert!(
        source[cursor..].trim().is_empty(),
        "{label}: text after the last piece: {:?}",
        &source[cursor..]
    );
}

fn check_split(file: &str, limit: usize, metric: LengthMetric, extra: &[&str]) -> Vec<Piece> {
    let path = path_arg(file);
    let limit_s = limit.to_string();
    let mut args = vec![
        "split",
        &path,
        "--limit",
        &limit_s,
        "--metric",
        metric.name(),
    ];
    args.extend_from_slice(extra);
    let max_lines = extra
        .iter()
        .position(|a| *a == "--max-lines")
        .map(|i| extra[i + 1].parse().unwrap());
    let out = pieces(&args);
    let source = data(file);
    check(
        &Expect {
            label: format!("split {file} {limit} {metric} {extra:?}"),
            source: &source,
            metric,
            limit,
            max_lines,
        },
        &out,
    );
    out
}

fn check_chunk(file: &str, min: usize, max: usize, metric: LengthMetric, extra: &[&str]) {
    let path = path_arg(file);
    let (min_s, max_s) = (min.to_string(), max.to_string());
    let mut args = vec![
        "chunk",
        &path,
        "--min",
        &min_s,
        "--max",
        &max_s,
        "--metric",
        metric.name(),
    ];
    args.extend_from_slice(extra);
    let out = pieces(&args);
    let source = data(file);
    check(
        &Expect {
            label: format!("chunk {file} {min}/{max} {metric} {extra:?}"),
            source: &source,
            metric,
            limit: max,
            max_lines: None,
        },
        &out,
    );
}

#[test]
fn split_code_heavy_for_telegram() {
    let out = check_split("code-heavy.md", 4096, LengthMetric::Utf16, &[]);
    // The file holds a fence longer than 4096 units, so it must have been cut inside it.
    assert!(out.len() >= 2, "{} pieces", out.len());
    assert!(out.iter().any(|p| p.fence_closed), "no fence was cut");
}

#[test]
fn split_corpus_in_every_metric() {
    for file in CORPUS {
        for metric in LengthMetric::ALL {
            for limit in [4000, 2000, 500] {
                check_split(file, limit, metric, &[]);
            }
        }
    }
}

#[test]
fn split_newline_mode_and_line_cap() {
    for file in ["code-heavy.md", "lists-tables.md", "node-events.md"] {
        check_split(file, 2000, LengthMetric::Chars, &["--mode", "newline"]);
        check_split(file, 2000, LengthMetric::Chars, &["--max-lines", "17"]);
        check_split(
            file,
            4000,
            LengthMetric::Utf16,
            &["--mode", "newline", "--max-lines", "17"],
        );
    }
}

#[test]
fn split_small_document_is_one_piece() {
    let source = data("prose-paragraphs.md");
    let out = check_split("prose-paragraphs.md", 4000, LengthMetric::Chars, &[]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].text.trim_end(), source.trim_end());
}

#[test]
fn chunk_code_heavy_defaults() {
    check_chunk("code-heavy.md", 800, 1200, LengthMetric::Chars, &[]);
}

#[test]
fn chunk_corpus_in_every_metric() {
    for file in CORPUS {
        for metric in LengthMetric::ALL {
            check_chunk(file, 800, 1200, metric, &[]);
            check_chunk(file, 100, 300, metric, &["--token", "7"]);
        }
    }
}

#[test]
fn chunk_break_preferences_and_paragraph_flush() {
    for file in ["prose-paragraphs.md", "code-heavy.md", "unicode-mix.md"] {
        for brk in ["paragraph", "newline", "sentence"] {
            check_chunk(file, 200, 500, LengthMetric::Utf16, &["--break", brk]);
        }
        check_chunk(
            file,
            200,
            800,
            LengthMetric::Chars,
            &["--flush-on-paragraph"],
        );
    }
}

/// SPEC §3 split-invariance, through the CLI: the delta size does not change the blocks.
#[test]
fn chunk_output_does_not_depend_on_delta_size() {
    for file in [
        "prose-paragraphs.md",
        "code-heavy.md",
        "unicode-mix.md",
        "unclosed-fence.md",
    ] {
        let path = path_arg(file);
        let runs: Vec<Vec<Piece>> = ["1", "4", "13", "1000000"]
            .iter()
            .map(|k| pieces(&["chunk", &path, "--min", "150", "--max", "400", "--token", k]))
            .collect();
        for run in &runs[1..] {
            assert_eq!(run, &runs[0], "{file}: blocks differ by delta size");
        }
    }
}

/// SPEC §9: forward progress even for one 100 000-character line inside a fence.
#[test]
fn one_huge_line_in_a_fence_still_splits() {
    let source = format!("```\n{}\n```\n", "x".repeat(100_000));
    for (sub, flags) in [
        ("split", &["--limit", "4000", "--metric", "utf16"][..]),
        (
            "chunk",
            &["--max", "4000", "--metric", "utf16", "--token", "1000"][..],
        ),
    ] {
        let mut child = Command::new(BIN)
            .arg(sub)
            .arg("-")
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(source.as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{sub}");
        let pieces: Vec<Piece> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(Piece::from_json)
            .collect();
        assert!(pieces.len() >= 25, "{sub}: {} pieces", pieces.len());
        check(
            &Expect {
                label: format!("{sub} huge fenced line"),
                source: &source,
                metric: LengthMetric::Utf16,
                limit: 4000,
                max_lines: None,
            },
            &pieces,
        );
    }
}

#[test]
fn stdin_gives_the_same_output_as_the_file() {
    let path = path_arg("unicode-mix.md");
    let from_file = run(&["split", &path, "--limit", "300", "--metric", "graphemes"]);
    let mut child = Command::new(BIN)
        .args(["split", "-", "--limit", "300", "--metric", "graphemes"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(data("unicode-mix.md").as_bytes()).unwrap();
    }
    let from_stdin = child.wait_with_output().unwrap();
    assert!(from_stdin.status.success());
    assert!(!from_file.stdout.is_empty());
    assert_eq!(from_stdin.stdout, from_file.stdout);
}

#[test]
fn help_goes_to_stdout_with_success() {
    // The main help lists the subcommands; each subcommand's help lists its own options.
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--help"],
            &["Usage:", "chunk", "split", "demo", "replay", "Exit status"],
        ),
        (&["-h"], &["Usage:", "demo"]),
        (&["help"], &["Usage:", "demo"]),
        (
            &["split", "--help"],
            &["Usage: replystream split", "--max-lines", "fence_reopened"],
        ),
        (
            &["chunk", "-h"],
            &["Usage: replystream chunk", "--flush-on-paragraph"],
        ),
        (
            &["help", "chunk"],
            &["Usage: replystream chunk", "--flush-on-paragraph"],
        ),
        (
            &["demo", "--help"],
            &[
                "Usage: replystream demo",
                "--live",
                "--chunk-max",
                "--human-delay",
                "--reasoning",
            ],
        ),
        (
            &["replay", "--help"],
            &[
                "Usage: replystream replay",
                "--no-auto-ack",
                "--coalesce-idle-ms",
            ],
        ),
    ];
    for (args, needles) in cases {
        let out = run(args);
        assert!(out.status.success(), "{args:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        for needle in *needles {
            assert!(
                stdout.contains(needle),
                "{args:?} lacks {needle:?}:\n{stdout}"
            );
        }
        assert!(out.stderr.is_empty(), "{args:?}");
    }
    // Help is per subcommand: chunk's options are not in split's help.
    let split_help = String::from_utf8(run(&["split", "--help"]).stdout).unwrap();
    assert!(!split_help.contains("--flush-on-paragraph"));
}

#[test]
fn version_goes_to_stdout_with_success() {
    for flag in ["-V", "--version"] {
        let out = run(&[flag]);
        assert!(out.status.success(), "{flag}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            stdout,
            format!("replystream {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
}

/// Runs a command that must fail with `code` and exactly one `replystream: ` line on stderr
/// that contains `needle`.
fn assert_fails(args: &[&str], code: i32, needle: &str) {
    let out = run(args);
    let stderr = String::from_utf8(out.stderr).expect("UTF-8 stderr");
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr:?}");
    assert!(stderr.ends_with('\n'), "{args:?}: {stderr:?}");
    assert!(stderr.starts_with("replystream: "), "{args:?}: {stderr:?}");
    assert!(
        stderr.contains(needle),
        "{args:?}: {stderr:?} lacks {needle:?}"
    );
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    let file = path_arg("prose-paragraphs.md");
    let f = file.as_str();
    assert_fails(&[], 2, "missing subcommand");
    assert_fails(&["dance", f], 2, "unrecognized subcommand 'dance'");
    assert_fails(&["--bogus"], 2, "--bogus");
    assert_fails(&["split", f, "--bogus"], 2, "unexpected argument '--bogus'");
    assert_fails(
        &["split", f, "--bogus"],
        2,
        "(try `replystream split --help`)",
    );
    assert_fails(
        &["chunk", f, "--limit", "5"],
        2,
        "unexpected argument '--limit'",
    );
    assert_fails(&["split", f, "-x"], 2, "'-x'");
    assert_fails(
        &["split", f, "--limit"],
        2,
        "a value is required for '--limit",
    );
    assert_fails(
        &["split", f, "--limit", "--metric", "utf16"],
        2,
        "a value is required for '--limit",
    );
    assert_fails(&["split", f, "--limit", "12k"], 2, "'12k'");
    assert_fails(&["split", f, "--metric", "furlongs"], 2, "furlongs");
    assert_fails(
        &["split", f, "--metric", "furlongs"],
        2,
        "possible values: utf16",
    );
    assert_fails(&["split", f, "--mode", "fast"], 2, "fast");
    assert_fails(&["chunk", f, "--break", "word"], 2, "word");
    assert_fails(&["chunk", f, "--token", "0"], 2, "--token");
    assert_fails(
        &["chunk", f, "--flush-on-paragraph=yes"],
        2,
        "unexpected value 'yes' for '--flush-on-paragraph'",
    );
    assert_fails(&["split"], 2, "<FILE>");
    assert_fails(&["split", f, f], 2, "unexpected argument");
    assert_fails(
        &["demo", f, "--channel", "mars"],
        2,
        "possible values: telegram",
    );
    assert_fails(
        &["demo", f, "--human-delay", "sometimes"],
        2,
        "off, natural, or MIN-MAX",
    );
    assert_fails(
        &["demo", f, "--human-delay", "900-100"],
        2,
        "MIN 900 is above MAX 100",
    );
    assert_fails(
        &["replay", f, "--reasoning", "loud"],
        2,
        "possible values: off, on, stream",
    );
    assert_fails(
        &["replay", f, "--block-streaming", "maybe"],
        2,
        "possible values: on, off",
    );
    // A limit the library refuses is reported in the library's words, still a usage error.
    assert_fails(
        &["split", f, "--limit", "30", "--metric", "bytes"],
        2,
        "split: invalid configuration: text limit must be at least 49, counted in bytes (got 30)",
    );
}

/// Negative and out-of-range numbers are refused as invalid values, never taken for a
/// missing value or an unknown option, and never passed on to the engine.
#[test]
fn negative_and_absurd_numbers_are_invalid_values() {
    let file = path_arg("prose-paragraphs.md");
    let f = file.as_str();
    assert_fails(
        &["chunk", f, "--min", "-5"],
        2,
        "invalid value '-5' for '--min <N>'",
    );
    assert_fails(
        &["chunk", f, "--min", "-5"],
        2,
        "negative numbers are not allowed",
    );
    assert_fails(
        &["split", f, "--limit", "-5"],
        2,
        "invalid value '-5' for '--limit <N>'",
    );
    assert_fails(&["split", f, "--limit", "0"], 2, "from 15 to 1000000");
    assert_fails(
        &["split", f, "--max-lines", "0"],
        2,
        "'--max-lines <N|none>'",
    );
    assert_fails(
        &["demo", f, "--ack-ms", "18446744073709551615"],
        2,
        "invalid value '18446744073709551615' for '--ack-ms <MS>': out of range",
    );
    assert_fails(
        &["demo", f, "--ack-ms", "86400001"],
        2,
        "from 0 to 86400000",
    );
    assert_fails(
        &["replay", f, "--ack-ms", "-1"],
        2,
        "negative numbers are not allowed",
    );
    assert_fails(
        &["demo", f, "--delivery-timeout-ms", "86400001"],
        2,
        "from 0 to 86400000",
    );
    assert_fails(
        &["demo", f, "--coalesce-idle-ms", "60001"],
        2,
        "from 0 to 60000",
    );
    assert_fails(
        &["demo", f, "--human-delay", "0-60001"],
        2,
        "MAX 60001 is above 60000",
    );
    assert_fails(&["demo", f, "--text-limit", "14"], 2, "from 15 to 1000000");
    assert_fails(
        &["demo", f, "--max-lines", "2"],
        2,
        "from 3 to 1000000, or none",
    );
    assert_fails(&["demo", f, "--chunk-max", "1000001"], 2, "out of range");
    assert_fails(&["demo", f, "--rate", "0"], 2, "from 1 to 100000");
    assert_fails(
        &["demo", f, "--seed", "-1"],
        2,
        "negative numbers are not allowed",
    );
    assert_fails(
        &["demo", f, "--seed", "18446744073709551616"],
        2,
        "out of range",
    );
}

#[test]
fn runtime_errors_exit_1_with_one_line() {
    let dir = std::env::temp_dir().join(format!("replystream-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("latin1.txt");
    std::fs::write(&bad, b"caf\xe9 au lait\n\nsecond paragraph\n").unwrap();
    let missing = dir.join("no-such-file.md");
    let bad_s = bad.to_str().unwrap();
    let missing_s = missing.to_str().unwrap();

    assert_fails(&["split", bad_s], 1, "not valid UTF-8");
    assert_fails(&["chunk", bad_s], 1, "offset 3");
    assert_fails(&["split", missing_s], 1, "cannot read");
    assert_fails(&["chunk", missing_s, "--min", "10"], 1, "no-such-file.md");
    assert_fails(&["split", dir.to_str().unwrap()], 1, "cannot read");
    assert_fails(
        &["demo", bad_s, "--channel", "discord"],
        1,
        "not valid UTF-8",
    );
    assert_fails(&["replay", missing_s], 1, "cannot read");

    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn empty_input_gives_no_output() {
    for sub in ["split", "chunk"] {
        let out = run(&[sub, "-"]);
        assert!(out.status.success(), "{sub}");
        assert!(out.stdout.is_empty(), "{sub}");
    }
}

/// The checker itself: it accepts a correct hand-made split and catches the faults it is
/// there to catch, so a passing run above means something.
mod checker {
    use super::*;

    const SOURCE: &str = "\nIntro line.\n\n```rust\nlet a = 1;\nlet b = 2;\n```\nEnd.\n";

    fn piece(text: &str, sep: &str, start: usize, end: usize, reopen: bool, close: bool) -> Piece {
        Piece {
            text: text.to_owned(),
            sep: sep.to_owned(),
            len: LengthMetric::Chars.len(text),
            start,
            end,
            fence_reopened: reopen,
            fence_closed: close,
            table_header_repeated: false,
            head_len: match reopen {
                true => text.find('\n').map_or(0, |i| i + 1),
                false => 0,
            },
            tail_len: match close {
                true => text.len() - text.rfind('\n').unwrap_or(text.len()),
                false => 0,
            },
            spans_reopened: false,
            spans_closed: false,
            dedent: 0,
            dedent_quotes: 0,
        }
    }

    fn good() -> Vec<Piece> {
        let fence_at = SOURCE.find("```rust").unwrap();
        let b_at = SOURCE.find("let b").unwrap();
        vec![
            piece("Intro line.", "\n\n", 1, 12, false, false),
            piece(
                "```rust\nlet a = 1;\n```",
                "\n",
                fence_at,
                b_at - 1,
                false,
                true,
            ),
            piece(
                "```rust\nlet b = 2;\n```\nEnd.",
                "\n",
                b_at,
                SOURCE.len() - 1,
                true,
                false,
            ),
        ]
    }

    fn expect() -> Expect<'static> {
        Expect {
            label: "hand-made".into(),
            source: SOURCE,
            metric: LengthMetric::Chars,
            limit: 30,
            max_lines: None,
        }
    }

    #[test]
    fn fence_walk() {
        assert_eq!(open_fence_at_end("a\n```\nb\n```\n"), None);
        assert!(open_fence_at_end("````\n```\n").is_some());
        assert_eq!(open_fence_at_end("~~~\n```\n~~~~ \n"), None);
        assert!(only_fence_lines("```js\n\n```"));
        assert!(!only_fence_lines("```js\nx\n```"));
    }

    #[test]
    fn accepts_a_correct_split() {
        check(&expect(), &good());
    }

    #[test]
    #[should_panic(expected = "gap or overlap")]
    fn catches_lost_text() {
        let mut pieces = good();
        pieces.remove(1);
        check(&expect(), &pieces);
    }

    #[test]
    #[should_panic(expected = "unbalanced fence")]
    fn catches_an_open_fence() {
        let mut pieces = good();
        pieces[1].text = "```rust\nlet a = 1;".into();
        pieces[1].len = LengthMetric::Chars.len(&pieces[1].text);
        pieces[1].fence_closed = false;
        check(&expect(), &pieces);
    }

    #[test]
    #[should_panic(expected = "> 20")]
    fn catches_an_overlong_piece() {
        let mut e = expect();
        e.limit = 20;
        check(&e, &good());
    }
}

/// One message line of `demo`'s timeline.
#[derive(Debug)]
struct Message {
    at_ms: u64,
    kind: String,
    len: usize,
    lines: usize,
    /// The text column: markers (‹lang›, (reasoning)) and the quoted first line.
    shown: String,
}

/// A demo run: its header line, its messages and its summary line.
struct Timeline {
    header: String,
    messages: Vec<Message>,
    summary: String,
}

fn demo(file: &str, flags: &[&str]) -> Timeline {
    let path = path_arg(file);
    let mut args = vec!["demo", path.as_str()];
    args.extend_from_slice(flags);
    let out = run(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    let mut lines = stdout.lines();
    let header = lines.next().expect("header").to_owned();
    let mut messages = Vec::new();
    let mut summary = String::new();
    for line in lines {
        if let Some(rest) = line.strip_prefix("summary: ") {
            summary = rest.to_owned();
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(secs) = fields.first().and_then(|f| f.strip_suffix('s')) else {
            continue;
        };
        let Ok(secs) = secs.parse::<f64>() else {
            continue;
        };
        // The text column is what follows the first four fields.
        let mut shown = line;
        for _ in 0..4 {
            shown = shown.trim_start();
            shown = &shown[shown.find(' ').expect("text column")..];
        }
        messages.push(Message {
            at_ms: (secs * 1000.0).round() as u64,
            kind: fields[1].to_owned(),
            len: fields[2].parse().expect("len"),
            lines: fields[3].parse().expect("lines"),
            shown: shown.trim().to_owned(),
        });
    }
    assert!(!summary.is_empty(), "{args:?}: no summary in {stdout}");
    assert!(
        summary.starts_with(&format!("{} messages", messages.len())),
        "{args:?}: {summary} vs {} message lines",
        messages.len()
    );
    Timeline {
        header,
        messages,
        summary,
    }
}

/// The README's main job: Discord's limits hold, and a message that starts inside a code
/// block shows its first code line, marked, never the reopened fence line.
#[test]
fn demo_on_discord_shows_content_lines() {
    let t = demo("code-heavy.md", &["--channel", "discord"]);
    assert!(
        t.header.contains("on discord (limit 2000 chars, 17 lines"),
        "{}",
        t.header
    );
    assert!(t.messages.len() >= 5, "{} messages", t.messages.len());
    for m in &t.messages {
        assert!(m.len <= 2000 && m.lines <= 17, "{m:?}");
        assert!(
            !m.shown.starts_with("\"```"),
            "a fence line is shown: {m:?}"
        );
    }
    let in_code = t
        .messages
        .iter()
        .filter(|m| m.shown.starts_with("‹rust› \""))
        .count();
    assert!(in_code >= 3, "{in_code} messages marked as rust code");
}

#[test]
fn demo_is_deterministic() {
    let flags = [
        "--channel",
        "telegram",
        "--human-delay",
        "natural",
        "--seed",
        "7",
    ];
    let a = run(&[&["demo", &path_arg("unicode-mix.md")][..], &flags[..]].concat());
    let b = run(&[&["demo", &path_arg("unicode-mix.md")][..], &flags[..]].concat());
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
}

/// Chunk and coalesce settings reach the engine: smaller blocks, more messages, each within
/// the sizes asked for.
#[test]
fn demo_chunk_and_coalesce_settings_apply() {
    let file = "prose-paragraphs.md";
    let default = demo(file, &[]);
    let small = demo(
        file,
        &[
            "--chunk-min",
            "100",
            "--chunk-max",
            "300",
            "--coalesce-min",
            "100",
            "--coalesce-max",
            "300",
            "--break",
            "sentence",
        ],
    );
    assert!(
        small.header.contains("chunks 100-300 sentence"),
        "{}",
        small.header
    );
    assert!(
        small.header.contains("coalesce 100-300"),
        "{}",
        small.header
    );
    assert!(small.messages.len() > default.messages.len() + 3);
    assert!(
        small.messages.iter().all(|m| m.len <= 300),
        "{:?}",
        small.messages
    );
}

#[test]
fn demo_text_limit_metric_and_line_cap_apply() {
    let t = demo(
        "code-heavy.md",
        &[
            "--text-limit",
            "500",
            "--metric",
            "utf16",
            "--max-lines",
            "8",
            "--chunk-max",
            "400",
        ],
    );
    assert!(
        t.header.contains("limit 500 utf16, 8 lines"),
        "{}",
        t.header
    );
    assert!(
        t.messages.iter().all(|m| m.len <= 500 && m.lines <= 8),
        "{:?}",
        t.messages
    );
    // `none` removes Discord's cap: a message may now pass 17 lines.
    let t = demo(
        "code-heavy.md",
        &["--channel", "discord", "--max-lines", "none"],
    );
    assert!(!t.header.contains("17 lines"), "{}", t.header);
    assert!(t.messages.iter().any(|m| m.lines > 17), "{:?}", t.messages);
}

#[test]
fn demo_block_streaming_off_sends_finals_at_the_end() {
    let t = demo(
        "prose-paragraphs.md",
        &["--block-streaming", "off", "--text-limit", "300"],
    );
    assert!(t.header.contains("block streaming off"), "{}", t.header);
    assert!(t.messages.len() >= 3);
    assert!(
        t.messages.iter().all(|m| m.kind == "final" && m.len <= 300),
        "{:?}",
        t.messages
    );
}

#[test]
fn demo_break_mode_message_end_waits_for_the_end() {
    let streamed = demo("prose-paragraphs.md", &["--chunk-max", "400"]);
    let at_end = demo(
        "prose-paragraphs.md",
        &["--chunk-max", "400", "--break-mode", "message-end"],
    );
    let model_done = |t: &Timeline| {
        let at = t
            .summary
            .find("model finished at ")
            .expect("model finished")
            + 18;
        let secs: f64 = t.summary[at..].split(' ').next().unwrap().parse().unwrap();
        (secs * 1000.0).round() as u64
    };
    assert!(streamed.messages[0].at_ms < model_done(&streamed));
    assert!(
        at_end.header.contains("break mode message_end"),
        "{}",
        at_end.header
    );
    assert!(
        at_end
            .messages
            .iter()
            .all(|m| m.at_ms >= model_done(&at_end))
    );
}

#[test]
fn demo_human_delay_paces_blocks() {
    let t = demo(
        "prose-paragraphs.md",
        &["--human-delay", "2000-2000", "--chunk-max", "300"],
    );
    assert!(
        t.header.contains("human delay 2000-2000 ms"),
        "{}",
        t.header
    );
    assert!(t.messages.len() >= 3);
    for pair in t.messages.windows(2) {
        assert!(pair[1].at_ms >= pair[0].at_ms + 2000, "{pair:?}");
    }
}

#[test]
fn demo_reasoning_stream_shows_the_reasoning_lane() {
    let file = "directives-and-thinking.md";
    let hidden = demo(file, &[]);
    assert!(
        hidden
            .messages
            .iter()
            .all(|m| !m.shown.contains("(reasoning)"))
    );
    let streamed = demo(file, &["--reasoning", "stream"]);
    assert!(
        streamed.header.contains("reasoning stream"),
        "{}",
        streamed.header
    );
    assert!(
        streamed
            .messages
            .iter()
            .any(|m| m.shown.starts_with("(reasoning) ")),
        "{:?}",
        streamed.messages
    );
}

/// `replay` takes the same engine settings: with block streaming off, the model's text
/// arrives as finals only.
#[test]
fn replay_takes_engine_settings() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("examples")
        .join("trace.jsonl");
    let trace = trace.to_str().unwrap();
    let kinds = |flags: &[&str]| -> Vec<String> {
        let out = run(&[&["replay", trace][..], flags].concat());
        assert!(out.status.success(), "{flags:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["action"] == "send")
            .map(|v| v["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(kinds(&[]).iter().any(|k| k == "block"));
    let off = kinds(&["--block-streaming", "off", "--channel", "telegram"]);
    assert!(off.iter().any(|k| k == "final"), "{off:?}");
    assert!(off.iter().all(|k| k != "block"), "{off:?}");
}

/// `demo --preview`: every operation on the preview message is a line (create, edits at most
/// one per throttle window, the final edit), each within Telegram's 4096 units, and the chat
/// ends with one message.
#[test]
fn demo_with_a_preview_shows_each_operation() {
    let t = demo(
        "prose-paragraphs.md",
        &["--channel", "telegram", "--preview", "partial"],
    );
    assert!(
        t.header
            .contains("preview partial (edit, limit 4096, throttle 1000 ms)"),
        "{}",
        t.header
    );
    let kinds: Vec<&str> = t.messages.iter().map(|m| m.kind.as_str()).collect();
    assert_eq!(kinds[0], "preview.create");
    assert!(
        kinds[1..kinds.len() - 1]
            .iter()
            .all(|k| *k == "preview.edit"),
        "{kinds:?}"
    );
    assert_eq!(*kinds.last().unwrap(), "final.edit");
    let previews: Vec<&Message> = t
        .messages
        .iter()
        .filter(|m| m.kind.starts_with("preview"))
        .collect();
    assert!(previews.windows(2).all(|p| p[1].at_ms - p[0].at_ms >= 1000));
    assert!(
        previews.windows(2).all(|p| p[1].len > p[0].len),
        "the preview grows"
    );
    assert!(t.messages.iter().all(|m| m.len <= 4096));
    assert!(
        t.summary.contains("the chat shows 1 message;")
            || t.summary.ends_with("the chat shows 1 message"),
        "{}",
        t.summary
    );

    // Drafts with a shorter window: draft updates 250 ms apart at least, a normal final.
    let t = demo(
        "prose-paragraphs.md",
        &[
            "--channel",
            "telegram",
            "--preview",
            "partial",
            "--preview-transport",
            "draft",
            "--throttle-ms",
            "100",
        ],
    );
    assert!(
        t.header.contains("(draft, limit 4096, throttle 250 ms)"),
        "{}",
        t.header
    );
    let kinds: Vec<&str> = t.messages.iter().map(|m| m.kind.as_str()).collect();
    assert!(
        kinds[..kinds.len() - 1]
            .iter()
            .all(|k| *k == "preview.draft"),
        "{kinds:?}"
    );
    assert_eq!(*kinds.last().unwrap(), "final");
    let drafts: Vec<&Message> = t
        .messages
        .iter()
        .filter(|m| m.kind == "preview.draft")
        .collect();
    assert!(drafts.windows(2).all(|p| p[1].at_ms - p[0].at_ms >= 250));
    assert!(drafts.windows(2).any(|p| p[1].at_ms - p[0].at_ms < 1000));
}

/// `replay --preview`: the preview's create is keyed; the simulated chat's id for it comes
/// back on every later edit as `message_ref`.
#[test]
fn replay_with_a_preview_carries_the_message_ref() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("examples")
        .join("trace.jsonl");
    let out = run(&[
        "replay",
        trace.to_str().unwrap(),
        "--channel",
        "telegram",
        "--preview",
        "partial",
        "--throttle-ms",
        "250",
        "--ack-ms",
        "20",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sends: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["action"] == "send")
        .collect();
    let create = sends
        .iter()
        .find(|v| v["kind"] == "preview" && v["op"] == "create")
        .expect("a preview create");
    assert_eq!(create["message_ref"], Value::Null);
    let key = &create["key"];
    let later: Vec<&Value> = sends
        .iter()
        .filter(|v| &v["key"] == key && v["op"] != "create")
        .collect();
    assert!(!later.is_empty());
    for v in later {
        assert!(
            v["message_ref"]
                .as_str()
                .is_some_and(|r| r.starts_with('m')),
            "{v}"
        );
    }
    assert!(
        sends.iter().all(|v| v["kind"] != "block"),
        "block streaming is off"
    );
}

#[test]
fn preview_options_refuse_bad_values() {
    let f = &path_arg("prose-paragraphs.md");
    assert_fails(&["demo", f, "--preview", "live"], 2, "live");
    assert_fails(&["demo", f, "--preview-transport", "bubble"], 2, "bubble");
    assert_fails(&["replay", f, "--throttle-ms", "60001"], 2, "out of range");
}

/// The repository's README.
fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    std::fs::read_to_string(path).expect("README.md")
}

/// Every command of the README shown with its output (a `$ ` line in a code block, the
/// lines up to the block's end being what it prints) gives exactly that output, stdout and
/// stderr together, with `replystream` being this build. Commands through `cargo` are run
/// by CI (.ci/readme-commands); `...` in a shown line stands for elided text.
#[test]
fn readme_transcripts_print_what_they_show() {
    let readme = readme();
    let bin_dir = Path::new(BIN).parent().expect("the binary's folder");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut lines = readme.lines().peekable();
    let mut checked = 0;
    while let Some(line) = lines.next() {
        let Some(command) = line.strip_prefix("$ ") else {
            continue;
        };
        let mut shown = Vec::new();
        while let Some(next) = lines.next_if(|l| !l.starts_with("```") && !l.starts_with("$ ")) {
            shown.push(next);
        }
        if command.starts_with("cargo ") {
            continue;
        }
        let out = Command::new("sh")
            .args(["-c", command])
            .current_dir(&root)
            .env("PATH", &path)
            .stdin(Stdio::null())
            .output()
            .expect("run sh");
        let printed =
            String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap();
        let printed: Vec<&str> = printed.lines().collect();
        assert_eq!(printed.len(), shown.len(), "{command}: {printed:#?}");
        for (got, want) in printed.iter().zip(&shown) {
            let mut rest = *got;
            let parts: Vec<&str> = want.split("...").collect();
            for (i, part) in parts.iter().enumerate() {
                let found = if i == 0 {
                    rest.strip_prefix(part).map(|r| (0, r))
                } else {
                    rest.find(part).map(|at| (at, &rest[at + part.len()..]))
                };
                let Some((_, after)) = found else {
                    panic!("{command}: printed\n{got}\nthe README shows\n{want}");
                };
                rest = after;
            }
            assert!(
                rest.is_empty() || want.ends_with("..."),
                "{command}: {got} vs {want}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 2, "{checked} README transcripts checked");
}

/// The smallest text limit per metric, wherever the README or the help states it, is the
/// library's `LengthMetric::min_limit`: every run of the four figures "N chars, N UTF-16
/// units, N bytes, N graphemes" is compared.
#[test]
fn stated_minimum_limits_are_the_librarys() {
    let unit = |word: &str| match word {
        "chars" => Some(LengthMetric::Chars),
        "utf16" | "UTF-16" => Some(LengthMetric::Utf16),
        "bytes" => Some(LengthMetric::Bytes),
        "graphemes" => Some(LengthMetric::Graphemes),
        _ => None,
    };
    let check = |text: &str, whose: &str| -> usize {
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || ",;:()[]|`".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        let mut runs = 0;
        let mut run: Vec<(LengthMetric, usize)> = Vec::new();
        let mut i = 0;
        while i <= words.len() {
            let pair = words
                .get(i)
                .and_then(|w| w.parse::<usize>().ok())
                .zip(words.get(i + 1).and_then(|w| unit(w)));
            if let Some((n, metric)) = pair {
                run.push((metric, n));
                i += 2;
                continue;
            }
            if i < words.len() && ["units", "or", "and"].contains(&words[i]) && !run.is_empty() {
                i += 1;
                continue;
            }
            if run.len() == 4 {
                runs += 1;
                for &(metric, n) in &run {
                    assert_eq!(
                        n,
                        metric.min_limit(),
                        "{whose} states {n} {} as a minimum: {run:?}",
                        metric.name()
                    );
                }
            }
            run.clear();
            i += 1;
        }
        runs
    };
    assert!(check(&readme(), "README.md") >= 6);
    for sub in ["split", "chunk", "demo", "replay"] {
        let out = run(&[sub, "--help"]);
        let help = String::from_utf8(out.stdout).unwrap();
        // One limit option each: --limit, --max, --text-limit (demo and replay).
        assert_eq!(check(&help, sub), 1, "{help}");
    }
}

/// The `[LO..=HI]` range an option is documented with in the README's command-line
/// reference is the one its `--help` shows (which the unit tests check against the parser).
#[test]
fn readme_option_ranges_are_the_helps() {
    let readme = readme();
    let range = |text: &str| -> Option<String> {
        let start = text.find('[')?;
        let rest = &text[start + 1..];
        let (lo, rest) = rest.split_once("..=")?;
        let hi: String = rest.chars().take_while(char::is_ascii_digit).collect();
        lo.parse::<u64>().ok().map(|lo| format!("{lo}..={hi}"))
    };
    let mut sub = "";
    let mut checked = 0;
    let mut helps = std::collections::HashMap::new();
    for line in readme.lines() {
        for (header, named) in [
            ("| `chunk` option", "chunk"),
            ("| `split` option", "split"),
            ("| `demo` option", "demo"),
            ("| `post` option", "post"),
            ("| engine option", "demo"),
        ] {
            if line.starts_with(header) {
                sub = named;
            }
        }
        if !line.starts_with("| `--") || sub.is_empty() {
            if !line.starts_with('|') {
                sub = "";
            }
            continue;
        }
        let long: String = line[3..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let help: &String = helps.entry(sub).or_insert_with(|| {
            String::from_utf8(run(&[sub, "--help"]).stdout).expect("UTF-8 help")
        });
        // The option's entry: its line and the continuation lines up to the next option.
        let mut entry = String::new();
        for help_line in help.lines().skip_while(|l| {
            !l.trim_start().starts_with(&format!("{long} ")) && l.trim_start() != long
        }) {
            let trimmed = help_line.trim_start();
            if !entry.is_empty() && (trimmed.starts_with('-') || trimmed.is_empty()) {
                break;
            }
            entry.push_str(trimmed);
            entry.push(' ');
        }
        assert!(!entry.is_empty(), "{sub} --help has no {long}");
        let meaning = line.split(" | ").nth(1).expect("a meaning column");
        assert_eq!(
            range(meaning),
            range(&entry),
            "{sub} {long}: README `{meaning}`, help `{entry}`"
        );
        checked += 1;
    }
    assert!(checked >= 30, "{checked} options checked");
}

/// A live demo that sends a short message about every half second for 25 s.
fn spawn_live_demo() -> std::process::Child {
    let path = path_arg("prose-paragraphs.md");
    let args = [
        "demo",
        &path,
        "--live",
        "--rate",
        "20",
        "--chunk-min",
        "24",
        "--chunk-max",
        "48",
        "--coalesce-max",
        "48",
    ];
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn replystream")
}

/// Waits up to `limit` for `child` to exit; kills it and fails the test if it does not.
#[allow(clippy::disallowed_methods)] // a real process on real time
fn exits_within(child: &mut std::process::Child, limit: std::time::Duration) -> ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for replystream") {
            return status;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("replystream still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `demo --live | head -1`: once the reader is gone, the live demo stops at its next line
/// (about half a second here) instead of streaming the rest of the reply (25 s), quietly and
/// with success, as the other subcommands do.
#[test]
fn live_demo_exits_when_stdout_closes() {
    let mut child = spawn_live_demo();
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut header = String::new();
    stdout.read_line(&mut header).expect("the header");
    assert!(header.starts_with("replystream demo: "), "{header}");
    drop(stdout);
    let status = exits_within(&mut child, std::time::Duration::from_secs(8));
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    assert_eq!(stderr, "");
}

/// Ctrl-C during a live demo: the summary of what was shown so far, then exit status 130
/// and one line on stderr.
#[test]
fn live_demo_prints_its_summary_on_ctrl_c() {
    let mut child = spawn_live_demo();
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut seen = Vec::new();
    // The header, a blank line, the columns, then the first message.
    while seen.len() < 4 {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).expect("a line") > 0, "{seen:?}");
        seen.push(line);
    }
    assert!(seen[3].contains(" block "), "{seen:?}");
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(kill.success());
    let status = exits_within(&mut child, std::time::Duration::from_secs(5));
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}: {stderr}");
    assert_eq!(stderr, "replystream: interrupted\n");
    let messages = 1 + rest.lines().filter(|l| l.contains(" block ")).count();
    let summary = rest.lines().last().expect("a summary line");
    assert!(
        summary.starts_with(&format!(
            "summary: {messages} messages ({messages} block, 0 tool, 0 final); first message at "
        )),
        "{rest}"
    );
    assert!(summary.contains("; interrupted (Ctrl-C) at "), "{summary}");
    assert!(!summary.contains("model finished"), "{summary}");
}

/// An OpenClaw file under `tests/data/openclaw/`.
fn openclaw_path(name: &str) -> String {
    path_arg(&format!("openclaw/{name}"))
}

/// `demo --config`: the file's channel and account settings apply between the profile and
/// the options, and the messages keep the account's limits.
#[test]
fn demo_reads_an_openclaw_file_for_a_channel_and_account() {
    let config = openclaw_path("gateway.json5");
    let t = demo(
        "code-heavy.md",
        &[
            "--config",
            &config,
            "--channel",
            "discord",
            "--account",
            "ops",
        ],
    );
    assert!(
        t.header
            .contains("on discord (account ops, from ")
            && t.header.contains("limit 1800 chars, 40 lines; chunks 400-1000 paragraph; coalesce 900-1200, idle 1500 ms"),
        "{}",
        t.header
    );
    assert!(t.header.contains("human delay natural"), "{}", t.header);
    for m in &t.messages {
        assert!(m.len <= 1800 && m.lines <= 40, "{m:?}");
    }
    // The first message carries the "auto" prefix, [Samantha].
    assert!(
        t.messages[0].shown.starts_with("\"[Samantha] "),
        "{:?}",
        t.messages[0]
    );

    // Options given on the command line are the last layer.
    let t = demo(
        "code-heavy.md",
        &[
            "--config",
            &config,
            "--channel",
            "discord",
            "--account",
            "ops",
            "--chunk-max",
            "600",
            "--max-lines",
            "none",
            "--human-delay",
            "off",
        ],
    );
    assert!(
        t.header
            .contains("limit 1800 chars; chunks 400-600 paragraph"),
        "{}",
        t.header
    );
    assert!(t.header.contains("human delay off"), "{}", t.header);
}

/// Keys the file sets but that cannot be applied are warnings on stderr, one a line, with
/// the file, the JSON path and the line; the run goes on.
#[test]
fn openclaw_warnings_go_to_stderr_and_the_run_goes_on() {
    let config = openclaw_path("typos.json5");
    let reply = path_arg("prose-paragraphs.md");
    let out = run(&[
        "demo",
        &reply,
        "--config",
        &config,
        "--channel",
        "discord",
        "--agent",
        "main",
    ]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 12, "{stderr}");
    for line in &warnings {
        assert!(
            line.starts_with(&format!("replystream: warning: {config}: ")),
            "{line}"
        );
    }
    assert!(
        stderr.contains(
            "channels.discord.textChunklimit (line 17): unknown key; did you mean `textChunkLimit`?"
        ),
        "{stderr}"
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("limit 1700 chars"), "{stdout}");
}

/// replay takes the same file: every send keeps the account's text limit.
#[test]
fn replay_reads_an_openclaw_file() {
    let config = openclaw_path("gateway.json5");
    let trace =
        std::env::temp_dir().join(format!("replystream-openclaw-{}.jsonl", std::process::id()));
    let long = "All work and no play makes a long reply. ".repeat(60);
    std::fs::write(
        &trace,
        format!(
            "{{\"t\": 0, \"type\": \"text_delta\", \"text\": {}}}\n{{\"t\": 10, \"type\": \"finish\"}}\n",
            serde_json::to_string(&long).unwrap()
        ),
    )
    .unwrap();
    let out = run(&[
        "replay",
        trace.to_str().unwrap(),
        "--config",
        &config,
        "--channel",
        "telegram",
        "--account",
        "alerts",
    ]);
    std::fs::remove_file(&trace).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let mut sent: Vec<String> = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["action"] == "send" {
            let text = v["text"].as_str().unwrap();
            assert!(LengthMetric::Utf16.len(text) <= 1000, "{text}");
            assert!(
                !text.starts_with('['),
                "the account disables the prefix: {text}"
            );
            sent.push(text.to_owned());
        }
    }
    assert!(sent.len() >= 3, "{} sends", sent.len());
    // Cut between sentences: the sends joined by the spaces at the cuts are the reply.
    assert_eq!(sent.join(" "), long.trim_end());
}

#[test]
fn bad_openclaw_files_and_selections_are_usage_errors() {
    let reply = path_arg("prose-paragraphs.md");
    let gateway = openclaw_path("gateway.json5");
    let bad = std::env::temp_dir().join(format!("replystream-bad-{}.json5", std::process::id()));
    std::fs::write(
        &bad,
        "{\n  channels: { telegram: { textChunkLimit: 'many' } },\n}\n",
    )
    .unwrap();
    let bad = bad.to_str().unwrap().to_owned();
    assert_fails(
        &["demo", &reply, "--config", &bad, "--channel", "telegram"],
        2,
        "line 2, column 43: channels.telegram.textChunkLimit: expected a whole number of at least 15, got \"many\"",
    );
    std::fs::write(&bad, "{ channels: { telegram: { } }").unwrap();
    assert_fails(
        &["demo", &reply, "--config", &bad],
        2,
        "expected ',' or '}', found the end of the text",
    );
    std::fs::remove_file(&bad).ok();
    assert_fails(
        &[
            "demo",
            &reply,
            "--config",
            &gateway,
            "--channel",
            "slack",
            "--account",
            "nope",
        ],
        2,
        "no account `nope` (configured: work, home)",
    );
    assert_fails(
        &["replay", &reply, "--account", "ops"],
        2,
        "--config <FILE>",
    );
    assert_fails(
        &["demo", &reply, "--config", "/nonexistent/openclaw.json"],
        1,
        "cannot read /nonexistent/openclaw.json",
    );
    // Without --config, only the built-in profiles.
    assert_fails(
        &["demo", &reply, "--channel", "matrix"],
        2,
        "possible values: telegram",
    );
}

/// Runs `replay -` with `trace` on stdin and `flags`; returns (status, stdout lines as
/// JSON, stderr).
fn replay_stdin(trace: &str, flags: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let mut child = Command::new(BIN)
        .args([&["replay", "-"][..], flags].concat())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        // A usage error exits before reading: the pipe may be closed, which is fine.
        let _ = stdin.write_all(trace.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    (
        out.status.code(),
        lines,
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Media written by the model: `--media-root` (repeatable) lets local paths inside it
/// through, resolved; every other local path is removed; `--no-http` keeps `http://` URLs
/// as text; a note on stderr counts the refusals; a relative root is a usage error.
#[test]
fn replay_applies_the_media_policy() {
    let reply = "Here:\nMEDIA: ~/.ssh/id_rsa\nMEDIA: /etc/shadow\nMEDIA: /srv/media/sub/../a.png\n\
                 MEDIA: http://example.com/b.png\nDone.";
    let trace = format!(
        "{}\n{{\"t\": 10, \"type\": \"finish\"}}\n",
        json!({"t": 0, "type": "text_delta", "text": reply})
    );
    let sends = |lines: &[Value]| -> (Vec<String>, Vec<String>) {
        let sends: Vec<&Value> = lines.iter().filter(|v| v["action"] == "send").collect();
        let texts = sends
            .iter()
            .map(|v| v["text"].as_str().unwrap().to_owned())
            .filter(|t| !t.is_empty())
            .collect();
        let media = sends
            .iter()
            .flat_map(|v| v["media"].as_array().unwrap().iter())
            .map(|m| m.as_str().unwrap().to_owned())
            .collect();
        (texts, media)
    };

    let (code, lines, stderr) = replay_stdin(&trace, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let (texts, media) = sends(&lines);
    assert_eq!(media, ["http://example.com/b.png"]);
    assert_eq!(texts, ["Here:", "Done."]);
    assert_eq!(
        stderr,
        "replystream: note: 3 media references written by the model refused (a local path \
         outside --media-root, or a URL to a private host or not allowed)\n"
    );

    let flags = [
        "--media-root",
        "/srv/other",
        "--media-root",
        "/srv/media/",
        "--no-http",
    ];
    let (code, lines, stderr) = replay_stdin(&trace, &flags);
    assert_eq!(code, Some(0), "{stderr}");
    let (texts, media) = sends(&lines);
    assert_eq!(media, ["/srv/media/a.png"]);
    assert_eq!(texts, ["Here:", "MEDIA: http://example.com/b.png\nDone."]);
    assert!(
        stderr.starts_with("replystream: note: 3 media references"),
        "{stderr}"
    );

    for (root, why) in [
        ("media", "media.roots[0] must be an absolute path"),
        (
            "/srv/../etc",
            "media.roots[0] must not hold a `..` component",
        ),
        ("/", "media.roots[0] must not be the top of the file system"),
    ] {
        let (code, lines, stderr) = replay_stdin(&trace, &["--media-root", root]);
        assert_eq!(code, Some(2), "{root}: {stderr}");
        assert!(lines.is_empty());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(why), "{root}: {stderr}");
    }
}

/// `demo` takes the same flags and names them in its header.
#[test]
fn demo_names_the_media_policy_in_its_header() {
    let t = demo(
        "directives-and-thinking.md",
        &[
            "--media-root",
            "/srv/media",
            "--media-root",
            "C:/Bot",
            "--no-http",
        ],
    );
    assert!(
        t.header
            .contains("; media roots /srv/media, C:\\Bot; https media only)"),
        "{}",
        t.header
    );
    let plain = demo("directives-and-thinking.md", &[]);
    assert!(!plain.header.contains("media roots"), "{}", plain.header);
    assert!(
        !plain.header.contains("https media only"),
        "{}",
        plain.header
    );
}

// ---- issue 16: what the chat user sees, through `split`, `replay` and `demo` ---------------

#[path = "../../tests/common/render_judge.rs"]
#[allow(dead_code)]
mod render_judge;

#[path = "../../tests/common/defects.rs"]
mod defects;

#[path = "../../tests/common/containers.rs"]
#[allow(dead_code)]
mod containers;

/// Runs the binary with `stdin` as its input; it must succeed.
fn run_with_stdin(args: &[&str], stdin: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run replystream");
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.to_owned();
    let writer = std::thread::spawn(move || input.write_all(text.as_bytes()));
    let out = child.wait_with_output().expect("wait");
    writer.join().unwrap().expect("write stdin");
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The messages the CLI shows for a defect case: `split` pieces, or the answer sends of
/// `replay` over a trace of the reply in one delta.
fn cli_messages(d: &defects::Defect) -> Vec<String> {
    let limit = d.limit.map(|n| n.to_string());
    let cap = d.max_lines.map(|n| n.to_string());
    match d.via {
        defects::Via::Splitter => {
            let mut args = vec!["split", "-"];
            if let Some(limit) = &limit {
                args.extend(["--limit", limit]);
            }
            if let Some(cap) = &cap {
                args.extend(["--max-lines", cap]);
            }
            run_with_stdin(&args, &d.text)
                .lines()
                .map(|l| Piece::from_json(l).text)
                .collect()
        }
        defects::Via::Engine => {
            let trace = [
                serde_json::json!({"t": 0, "type": "message_start"}),
                serde_json::json!({"type": "text_delta", "text": d.text}),
                serde_json::json!({"type": "message_end"}),
                serde_json::json!({"type": "finish"}),
            ]
            .iter()
            .map(|v| v.to_string() + "\n")
            .collect::<String>();
            let config_path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("defect-{}.json5", d.id));
            let config_arg = config_path.to_str().expect("UTF-8 path").to_owned();
            let mut args = vec!["replay", "-", "--channel", d.channel];
            if let Some(limit) = &limit {
                args.extend(["--text-limit", limit]);
            }
            if let Some(cap) = &cap {
                args.extend(["--max-lines", cap]);
            }
            if let Some(prefix) = d.prefix {
                let config = serde_json::json!({
                    "channels": { d.channel: {} },
                    "messages": { "responsePrefix": prefix },
                });
                std::fs::write(&config_path, config.to_string()).expect("write config");
                args.extend(["--config", &config_arg]);
            }
            run_with_stdin(&args, &trace)
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).expect("JSON line"))
                .filter(|v| v["action"] == "send" && v["lane"] == "answer")
                // The Markdown each send came from (`text` is in the channel's format: the
                // rendering rule judges the Markdown a CommonMark renderer would show).
                .map(|v| v["markdown"].as_str().expect("markdown").to_owned())
                .collect()
        }
    }
}

fn cli_holds(id: &str) {
    let d = defects::defect(id);
    if let Err(e) = defects::check(&d, &cli_messages(&d)) {
        panic!("through the CLI: {e}");
    }
}

/// The harness itself: a case that holds today (a prefix before prose and a fence, under a
/// small limit) passes through the same commands.
#[test]
fn cli_defect_harness_shows_what_the_engine_sends() {
    let d = defects::Defect {
        id: "harness",
        today: "holds",
        via: defects::Via::Engine,
        channel: "discord",
        limit: Some(120),
        max_lines: None,
        prefix: Some("[bot]"),
        text: "Sure, here it is.\n\n```python\nprint(1)\nprint(2)\n```\n\nThat prints **two** \
               lines, and the second paragraph is long enough to need its own message here."
            .to_owned(),
        sees: |m| {
            if m.len() >= 2 && m[0].starts_with("[bot] Sure") {
                Ok(())
            } else {
                Err(format!("{m:?}"))
            }
        },
    };
    defects::check(&d, &cli_messages(&d)).unwrap_or_else(|e| panic!("{e}"));
    let split = defects::Defect {
        via: defects::Via::Splitter,
        limit: Some(60),
        prefix: None,
        sees: |m| {
            if m.len() >= 3 {
                Ok(())
            } else {
                Err(format!("{m:?}"))
            }
        },
        ..d
    };
    defects::check(&split, &cli_messages(&split)).unwrap_or_else(|e| panic!("{e}"));
}

defects::numbered_defect_tests!(cli_holds);

/// `demo` streams the 7 KB travel plan on Telegram at its default pace: every message whose
/// first line is a table row must start with the table's header row.
#[test]
fn cli_defect_1_demo_shows_the_header_first_in_every_table_message() {
    let out = run(&[
        "demo",
        "--channel",
        "telegram",
        &path_arg("replies/travel-plan-7kb-table.md"),
    ]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let first_lines: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("time"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_once('"').map_or("", |(_, rest)| rest))
        .collect();
    assert!(first_lines.len() >= 2, "{stdout}");
    for line in &first_lines {
        if line.starts_with('|') {
            assert!(
                line.starts_with("| Item | Estimate (¥) | Notes |"),
                "a message continues the table without its header: {line:?}\n{stdout}"
            );
        }
    }
}

/// `chunk` blocks of `file` (in `tests/data`) at `--min 400 --max 600`, judged against the
/// whole file: each block, rendered alone, shows its stretch of the reply.
fn chunk_blocks_render_alike(file: &str) {
    let text = data(file);
    let blocks: Vec<String> = pieces(&["chunk", &path_arg(file), "--min", "400", "--max", "600"])
        .into_iter()
        .map(|p| p.text)
        .collect();
    assert!(blocks.len() >= 2, "{file}: {} blocks", blocks.len());
    if let Err(e) = render_judge::check_messages(&text, &blocks, &render_judge::Allow::default()) {
        panic!("{file} through `chunk`: {e}");
    }
}

#[test]
fn cli_chunk_blocks_of_prose_and_code_render_alike() {
    for file in ["prose-paragraphs.md", "code-heavy.md", "unicode-mix.md"] {
        chunk_blocks_render_alike(file);
    }
}

#[test]
fn cli_chunk_blocks_of_a_long_table_render_as_tables() {
    chunk_blocks_render_alike("replies/travel-plan-7kb-table.md");
}

#[test]
fn cli_split_reports_pieces_de_indented_out_of_their_list_item() {
    // Pieces that start inside code 4 columns deep in list items show it de-indented,
    // and say by how much (`dedent`); `check` holds each to its de-indented source.
    let file = "replies/setup-guide-nested-fences.md";
    let out = check_split(file, 300, LengthMetric::Chars, &[]);
    let deep: Vec<&Piece> = out.iter().filter(|p| p.dedent > 0).collect();
    assert!(!deep.is_empty(), "no piece de-indented: {out:#?}");
    for p in &deep {
        assert!(
            !p.text.starts_with("    "),
            "{:?} is still 4 columns deep",
            p.text
        );
    }
    let texts: Vec<String> = out.iter().map(|p| p.text.clone()).collect();
    if let Err(e) =
        render_judge::check_messages(&data(file), &texts, &render_judge::Allow::default())
    {
        panic!("{file} through `split`: {e}");
    }
}

#[test]
fn cli_chunk_blocks_of_a_setup_guide_keep_its_code() {
    chunk_blocks_render_alike("replies/setup-guide-nested-fences.md");
}

#[test]
fn cli_chunk_de_indents_a_block_starting_in_an_items_paragraph() {
    // The second block starts in the middle of the item's paragraph, with the item's
    // fence 4 columns deep after it: shown de-indented by the item's 3 columns, and says so.
    let text = "1. Install rustup first. It takes a minute or two on a slow line. If rustup \
show lists no toolchain, run this:\r\n    ```sh\r\n    rustup default stable\r\n    ```\r\n\
2. Next step.";
    let mut child = Command::new(BIN)
        .args(["chunk", "-", "--min", "60", "--max", "100"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<(String, usize, usize, usize)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(Piece::from_json)
        .map(|p| (p.text, p.dedent, p.start, p.end))
        .collect();
    let second =
        "If rustup show lists no toolchain, run this:\r\n ```sh\r\n rustup default stable\r\n ```";
    assert_eq!(
        got,
        [
            (
                "1. Install rustup first. It takes a minute or two on a slow line.".to_owned(),
                0,
                0,
                65
            ),
            (second.to_owned(), 3, 66, 157),
            ("2. Next step.".to_owned(), 0, 159, 172),
        ]
    );
    let texts: Vec<String> = got.into_iter().map(|g| g.0).collect();
    render_judge::check_messages(text, &texts, &render_judge::Allow::default()).unwrap();
}

#[test]
fn cli_split_de_indents_a_piece_inside_a_quoted_items_fence_after_the_quote_marker() {
    // A list item in a quote whose fence sits 4 columns past the `>`: the piece that starts
    // inside it (a 5-line cap) takes the item's 3 columns off after each `> ` and says so.
    let text = "> 1) Run:\n>     ```\n>     let first = 65;\n>     cargo build --release\n>\n>     \
print(1)\n>     ```\n>\n> 2) Ship it.";
    let mut child = Command::new(BIN)
        .args(["split", "-", "--limit", "300", "--metric", "chars"])
        .args(["--max-lines", "5"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<(String, usize, usize, usize)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(Piece::from_json)
        .map(|p| (p.text, p.dedent, p.dedent_quotes, p.head_len))
        .collect();
    assert_eq!(
        got,
        [
            (
                "> 1) Run:\n>     ```\n>     let first = 65;\n>     ```".to_owned(),
                0,
                0,
                0
            ),
            (
                ">  ```\n>  cargo build --release\n>\n>  print(1)\n>  ```".to_owned(),
                3,
                1,
                7
            ),
            (">\n> 2) Ship it.".to_owned(), 0, 0, 0),
        ]
    );
}
