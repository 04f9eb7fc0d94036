//! Platform formats in the CLI (SPEC §16): `replay` prints each send's `text` in the
//! channel's format, its `format` and `markdown`, and `entities` for telegram-entities;
//! `--format` and `--table-mode` override the profile on `replay`, `demo` and `split`.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_replystream");

const TRACE: &str = r#"{"t": 0, "type": "text_delta", "text": "**Hi** 😀 <you> & [docs](https://x.io/?a=1&b=2)\n\n| k | v |\n|---|--:|\n| a | 1 |"}
{"t": 10, "type": "finish"}
"#;

/// Runs `args` with `stdin`; returns (exit code, stdout, stderr).
fn run(args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // A usage error exits before reading: the pipe may be closed, which is fine.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn sends(flags: &[&str]) -> Vec<Value> {
    let (code, out, err) = run(&[&["replay", "-"][..], flags].concat(), TRACE);
    assert_eq!(code, Some(0), "{err}");
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["action"] == "send")
        .collect()
}

const MARKDOWN: &str =
    "**Hi** 😀 <you> & [docs](https://x.io/?a=1&b=2)\n\n| k | v |\n|---|--:|\n| a | 1 |";

#[test]
fn replay_prints_text_format_and_markdown_per_channel() {
    let s = sends(&["--channel", "telegram"]);
    assert_eq!(s.len(), 1, "{s:#?}");
    assert_eq!(s[0]["format"], "telegram-html");
    assert_eq!(s[0]["markdown"], MARKDOWN);
    assert_eq!(
        s[0]["text"],
        "<b>Hi</b> 😀 &lt;you&gt; &amp; <a href=\"https://x.io/?a=1&amp;b=2\">docs</a>\n\n<pre>k | v\n--|--\na | 1</pre>"
    );
    assert!(s[0].get("entities").is_none());

    let s = sends(&["--channel", "slack"]);
    assert_eq!(s[0]["format"], "slack-mrkdwn");
    assert_eq!(
        s[0]["text"],
        "*Hi* 😀 &lt;you&gt; &amp; <https://x.io/?a=1&amp;b=2|docs>\n\n```k | v\n--|--\na | 1```"
    );

    let s = sends(&[]);
    assert_eq!(s[0]["format"], "markdown");
    assert_eq!(s[0]["text"], MARKDOWN);
}

#[test]
fn replay_telegram_entities_lists_objects_in_utf16_units() {
    let s = sends(&[
        "--channel",
        "telegram",
        "--format",
        "telegram-entities",
        "--table-mode",
        "bullets",
    ]);
    assert_eq!(s[0]["format"], "telegram-entities");
    assert_eq!(s[0]["text"], "Hi 😀 <you> & docs\n\n• k: a; v: 1");
    assert_eq!(
        s[0]["entities"],
        json!([
            {"type": "bold", "offset": 0, "length": 2},
            {"type": "text_link", "offset": 14, "length": 4, "url": "https://x.io/?a=1&b=2"},
        ])
    );
}

#[test]
fn a_format_the_channel_cannot_show_is_a_usage_error() {
    let (code, _, err) = run(
        &[
            "replay",
            "-",
            "--channel",
            "telegram",
            "--format",
            "slack-mrkdwn",
        ],
        TRACE,
    );
    assert_eq!(code, Some(2));
    assert!(
        err.contains("format slack-mrkdwn cannot be shown on channel telegram"),
        "{err}"
    );
    let (code, _, err) = run(&["replay", "-", "--format", "html"], TRACE);
    assert_eq!(code, Some(2));
    assert!(err.contains("telegram-html"), "{err}");
    let (code, _, err) = run(
        &[
            "replay",
            "-",
            "--channel",
            "discord",
            "--table-mode",
            "native",
        ],
        TRACE,
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("table_mode native"), "{err}");
}

#[test]
fn demo_shows_rendered_messages() {
    let (code, out, err) = run(
        &["demo", "-", "--channel", "telegram"],
        "Use **bold** & <tags>.\n",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("\"Use <b>bold</b> &amp; &lt;tags&gt;.\""),
        "{out}"
    );
    assert!(out.contains("format telegram-html"), "{out}");
    let (code, out, err) = run(
        &["demo", "-", "--channel", "telegram", "--format", "plain"],
        "Use **bold**.\n",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\"Use bold.\""), "{out}");
}

#[test]
fn split_renders_each_piece() {
    let text = "# Title\n\nSome **bold** text.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    let (code, out, err) = run(
        &[
            "split",
            "-",
            "--format",
            "whatsapp",
            "--table-mode",
            "bullets",
        ],
        text,
    );
    assert_eq!(code, Some(0), "{err}");
    let pieces: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(pieces.len(), 1);
    assert_eq!(
        pieces[0]["text"],
        "*Title*\n\nSome *bold* text.\n\n• a: 1; b: 2"
    );
    assert_eq!(pieces[0]["markdown"], text.trim_end());
    assert_eq!(pieces[0]["format"], "whatsapp");
    assert_eq!(pieces[0]["len"], 40);
    let (code, out, _) = run(&["split", "-"], text);
    assert_eq!(code, Some(0));
    let plain: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert!(plain.get("format").is_none() && plain["text"] == text.trim_end());
}

/// With `--format`, `split` counts each piece as the platform does once rendered: Slack's
/// `&amp;` `&lt;` `&gt;` are characters posted, so an escape-heavy text is cut shorter than
/// its Markdown alone would be; a limit too small for that growth is refused.
#[test]
fn split_counts_the_limit_on_the_rendered_piece() {
    let text: String = (0..120)
        .map(|i| format!("W{i:03} Tom & Jerry <3 a>b && c. "))
        .collect();
    let (code, out, err) = run(
        &["split", "-", "--format", "slack-mrkdwn", "--limit", "200"],
        &text,
    );
    assert_eq!(code, Some(0), "{err}");
    let pieces: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut words = String::new();
    for p in &pieces {
        let posted = p["text"].as_str().unwrap();
        assert!(
            posted.chars().count() <= 200,
            "{} chars: {posted:?}",
            posted.chars().count()
        );
        let md = p["markdown"].as_str().unwrap();
        // Counted on the Markdown alone, most pieces would have been longer.
        assert!(md.chars().count() < posted.chars().count(), "{md:?}");
        words.push_str(md);
        words.push(' ');
    }
    for i in 0..120 {
        let w = format!("W{i:03}");
        assert_eq!(words.matches(w.as_str()).count(), 1, "{w}");
    }
    let (code, _, err) = run(
        &["split", "-", "--format", "slack-mrkdwn", "--limit", "60"],
        &text,
    );
    assert_ne!(code, Some(0));
    assert!(err.contains("at least 93"), "{err}");
}
