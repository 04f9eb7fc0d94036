//! `replystream post` with `--media-root`: a file the model names inside the root is
//! uploaded; one that a symbolic link leads out of the root is not, and the command says
//! which and exits 1.
#![allow(clippy::disallowed_methods)] // real servers, real time, a real file system
#![cfg(unix)] // symbolic links made with std::os::unix

#[path = "../../connections/tests/fake/mod.rs"]
mod fake;

use std::process::{Command, Output, Stdio};

use fake::discord::FakeDiscord;

const BIN: &str = env!("CARGO_BIN_EXE_replystream");
const TOKEN: &str = "DC-SECRET.media";

fn post(reply: &std::path::Path, url: &str, root: &std::path::Path) -> Output {
    Command::new(BIN)
        .args([
            "post",
            &reply.to_string_lossy(),
            "--to",
            "discord",
            "--chat",
            "9",
        ])
        .args(["--api-url", url, "--media-root", &root.to_string_lossy()])
        .env_clear()
        .env("DISCORD_BOT_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn post_uploads_from_the_media_root_and_refuses_a_link_out_of_it() {
    let base = std::env::temp_dir().join(format!("rs-post-media-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let root = base.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(base.join("secret.txt"), b"TOP-SECRET").unwrap();
    std::fs::write(root.join("chart.png"), b"\x89PNG\r\n\x1a\n").unwrap();
    std::os::unix::fs::symlink(base.join("secret.txt"), root.join("leak.png")).unwrap();

    let good = base.join("good.md");
    let chart = root.join("chart.png").to_string_lossy().into_owned();
    std::fs::write(&good, format!("Chart:\nMEDIA: {chart}\n")).unwrap();
    let fake = FakeDiscord::start(TOKEN, &["9"]);
    let output = post(&good, &fake.url(), &root);
    let out = String::from_utf8(output.stdout).unwrap();
    let err = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    let msgs = fake.messages("9");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0].content, "Chart:");
    assert_eq!(msgs[0].attachments, ["chart.png:8"]);

    let bad = base.join("bad.md");
    let leak = root.join("leak.png").to_string_lossy().into_owned();
    std::fs::write(&bad, format!("Look:\nMEDIA: {leak}\n")).unwrap();
    let fake = FakeDiscord::start(TOKEN, &["9"]);
    let output = post(&bad, &fake.url(), &root);
    let out = String::from_utf8(output.stdout).unwrap();
    let err = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
    assert!(
        out.contains(&format!(
            "failed: media file {leak}: resolves outside every media root"
        )),
        "the timeline names the file:\n{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("not delivered: block") && l.ends_with(" + 1 media")),
        "the summary lists it:\n{out}"
    );
    assert!(err.contains("not delivered"), "{err}");
    // The text arrived (with the final); no file did, and no byte of the secret.
    let msgs = fake.messages("9");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0].content, "Look:");
    assert!(msgs[0].attachments.is_empty());
    assert!(!out.contains(TOKEN) && !err.contains(TOKEN));
    std::fs::remove_dir_all(&base).unwrap();
}
