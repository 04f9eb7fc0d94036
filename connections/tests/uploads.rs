//! Local files the model names, uploaded from the media roots only, with symbolic links
//! followed: real links in a temporary directory, real engines through the driver and the
//! worker-pool sink, against each platform's fake server. The engine admits a path lexically
//! (it does no I/O); the connection must see where the path really leads and refuse it for
//! good, without one byte of the file leaving and without a retry.
#![allow(clippy::disallowed_methods)] // real servers, real time, a real file system
#![cfg(unix)] // symbolic links made with std::os::unix

mod fake;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake::discord::FakeDiscord;
use fake::slack::FakeSlack;
use fake::telegram::FakeTelegram;
use fake::{failure, send};
use replystream::driver::{Driver, DriverOptions, StreamEvent};
use replystream::{
    ChannelProfile, Config, MediaPolicy, Payload, SendKind, SendOp, TurnOutcome, UndeliveredReason,
};
use replystream_connections::discord::Discord;
use replystream_connections::sink::PlatformSink;
use replystream_connections::slack::Slack;
use replystream_connections::telegram::Telegram;
use replystream_connections::{Failure, HttpOptions, MediaRoots, Outcome, Platform};

const TG_TOKEN: &str = "123456:SECRET-token_value";
const DC_TOKEN: &str = "discord-SECRET";
const SL_TOKEN: &str = "xoxb-slack-SECRET";

/// What must never be uploaded (13 bytes).
const SECRET: &[u8] = b"TOP-SECRET-42";
/// The one file that may be (8 bytes).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

/// A temporary tree:
///
/// ```text
/// base/secret.txt            (outside the root)
/// base/outside/secret.txt    (outside the root)
/// base/root/ok.png           a real file: uploaded
/// base/root/leak.png      -> base/outside/secret.txt
/// base/root/linkdir       -> base/outside
/// base/root/fifo.png         not a regular file
/// ```
struct Tree {
    base: PathBuf,
}

impl Tree {
    fn new(name: &str) -> Tree {
        let base = std::env::temp_dir().join(format!("rs-uploads-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("root")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("secret.txt"), SECRET).unwrap();
        std::fs::write(base.join("outside/secret.txt"), SECRET).unwrap();
        std::fs::write(base.join("root/ok.png"), PNG).unwrap();
        std::os::unix::fs::symlink(base.join("outside/secret.txt"), base.join("root/leak.png"))
            .unwrap();
        std::os::unix::fs::symlink(base.join("outside"), base.join("root/linkdir")).unwrap();
        Tree { base }
    }

    fn root(&self) -> PathBuf {
        self.base.join("root")
    }

    fn path(&self, relative: &str) -> String {
        self.root().join(relative).to_string_lossy().into_owned()
    }

    fn roots(&self) -> MediaRoots {
        MediaRoots::new([self.root()])
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// The paths a model may write that the engine admits (lexically inside the root) and that
/// lead outside it on the file system.
fn escapes(tree: &Tree) -> Vec<String> {
    vec![
        // A link to a file outside.
        tree.path("leak.png"),
        // A file under a linked directory.
        tree.path("linkdir/secret.txt"),
    ]
}

/// The failures the workers reported, and how each turn ended.
struct Run {
    failures: Vec<(SendKind, Failure)>,
    outcomes: Vec<TurnOutcome>,
}

/// One turn per reply in `chat`, each streamed whole, through the driver and the sink.
fn run(platform: impl Platform, profile: &str, chat: &str, replies: &[String], root: &Path) -> Run {
    let failures = Arc::new(Mutex::new(Vec::new()));
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let (f, o) = (failures.clone(), outcomes.clone());
    let sink = PlatformSink::new(platform)
        .on_delivery(move |r| {
            if let Outcome::Failed(fail) = r.outcome {
                f.lock().unwrap().push((r.send.kind, fail.clone()));
            }
        })
        .on_event(move |_, e| {
            if let StreamEvent::Idle(outcome) = e {
                o.lock().unwrap().push(outcome.clone());
            }
        });
    let driver = Driver::spawn(sink, DriverOptions::default());
    let mut config = Config::for_channel(&ChannelProfile::by_name(profile).unwrap());
    config.media = MediaPolicy::with_roots([root.to_string_lossy().into_owned()]);
    for reply in replies {
        // Counted before the turn starts: its Idle may come before `finish` returns.
        let before = outcomes.lock().unwrap().len();
        let stream = driver.open(chat, config.clone(), 7).unwrap();
        stream.text(reply).unwrap();
        stream.finish().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while outcomes.lock().unwrap().len() == before {
            assert!(std::time::Instant::now() < deadline, "the turn never ended");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    assert!(driver.shutdown(Duration::from_secs(5)).is_clean());
    let failures = failures.lock().unwrap().clone();
    let outcomes = outcomes.lock().unwrap().clone();
    Run { failures, outcomes }
}

/// The replies: one with the good file, then one per escaping path.
fn replies(tree: &Tree) -> Vec<String> {
    let mut replies = vec![format!("Chart:\nMEDIA: {}\n", tree.path("ok.png"))];
    replies.extend(escapes(tree).iter().map(|p| format!("Look.\nMEDIA: {p}\n")));
    replies
}

/// The first turn delivered everything; every other turn lost exactly its one file, for good
/// (one attempt: the sink reported one permanent failure per escaping path, naming the
/// path as the model wrote it and saying why). The text of the refused send is not lost:
/// the engine sends it again as the turn's final.
fn check_run(tree: &Tree, run: &Run) {
    let escapes = escapes(tree);
    assert_eq!(run.outcomes.len(), 1 + escapes.len());
    assert!(run.outcomes[0].all_delivered(), "{:?}", run.outcomes[0]);
    for (outcome, path) in run.outcomes[1..].iter().zip(&escapes) {
        assert_eq!(outcome.undelivered.len(), 1, "{outcome:?}");
        let lost = &outcome.undelivered[0];
        assert_eq!(lost.reason, UndeliveredReason::Failed);
        assert_eq!(lost.payload.media, std::slice::from_ref(path));
    }
    assert_eq!(run.failures.len(), escapes.len(), "{:?}", run.failures);
    for ((kind, failure), path) in run.failures.iter().zip(&escapes) {
        assert_eq!(*kind, SendKind::Block);
        assert!(failure.permanent && failure.retry_after_ms.is_none());
        assert_eq!(
            failure.reason,
            format!(
                "media file {path}: resolves outside every media root (a symbolic link \
                 leaves the root); not uploaded"
            )
        );
    }
}

#[test]
fn telegram_uploads_nothing_a_link_leads_out_of_the_root() {
    let tree = Tree::new("tg");
    let fake = FakeTelegram::start(TG_TOKEN, &["5"]);
    let tg = Telegram::with_options(TG_TOKEN, &fake.url(), &HttpOptions::default())
        .with_media_roots(tree.roots());
    let run = run(tg, "telegram", "5", &replies(&tree), &tree.root());
    check_run(&tree, &run);
    let shown: Vec<(String, Option<String>)> = fake
        .messages("5")
        .into_iter()
        .map(|m| (m.text, m.file))
        .collect();
    let text = |t: &str| (t.to_owned(), None);
    assert_eq!(
        shown,
        [
            (
                "Chart:".to_owned(),
                Some("upload:ok.png:image/png:8".to_owned())
            ),
            text("Look."),
            text("Look."),
        ]
    );
    // The refused sends made no call: only their text went, as the turn's final.
    assert_eq!(fake.methods(), ["sendPhoto", "sendMessage", "sendMessage"]);
}

#[test]
fn discord_uploads_nothing_a_link_leads_out_of_the_root() {
    let tree = Tree::new("dc");
    let fake = FakeDiscord::start(DC_TOKEN, &["9"]);
    let dc = Discord::with_options(DC_TOKEN, &fake.url(), &HttpOptions::default())
        .with_media_roots(tree.roots());
    let run = run(dc, "discord", "9", &replies(&tree), &tree.root());
    check_run(&tree, &run);
    let shown: Vec<(String, Vec<String>)> = fake
        .messages("9")
        .into_iter()
        .map(|m| (m.content, m.attachments))
        .collect();
    let text = |t: &str| (t.to_owned(), Vec::new());
    assert_eq!(
        shown,
        [
            ("Chart:".to_owned(), vec!["ok.png:8".to_owned()]),
            text("Look."),
            text("Look."),
        ]
    );
}

#[test]
fn slack_uploads_nothing_a_link_leads_out_of_the_root() {
    let tree = Tree::new("sl");
    let fake = FakeSlack::start(SL_TOKEN, &["C1"]);
    let sl = Slack::with_options(SL_TOKEN, &fake.url(), &HttpOptions::default())
        .with_media_roots(tree.roots());
    let run = run(sl, "slack", "C1", &replies(&tree), &tree.root());
    check_run(&tree, &run);
    let shares = fake.shares();
    assert_eq!(shares.len(), 1, "{shares:?}");
    assert_eq!(shares[0].files, [("ok.png".to_owned(), PNG.to_vec())]);
    assert_eq!(shares[0].comment.as_deref(), Some("Chart:"));
    // One upload URL asked for, for the good file only.
    let asked: Vec<String> = fake.uploads().into_iter().map(|u| u.filename).collect();
    assert_eq!(asked, ["ok.png"]);
    // The refused sends' text went as their turns' finals.
    assert_eq!(fake.texts("C1"), ["Look.", "Look."]);
}

/// Paths a host may hand a platform itself (the engine resolves `..` on paper, so it never
/// sends one): a `..` taken through a linked directory, a directory, a FIFO, a missing
/// file, a link that is fine (it stays inside the root), and no roots at all.
#[test]
fn each_platform_reads_the_real_location_of_a_path_before_uploading() {
    let tree = Tree::new("direct");
    let fifo = tree.root().join("fifo.png");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let have_fifo = made.is_ok_and(|s| s.success());
    std::os::unix::fs::symlink(tree.root().join("ok.png"), tree.root().join("alias.png")).unwrap();
    let refused = [
        // root/linkdir/.. is base (linkdir is base/outside): base/secret.txt.
        (
            tree.path("linkdir/../secret.txt"),
            "resolves outside every media root",
        ),
        (tree.path("linkdir"), "resolves outside every media root"),
        (tree.path("."), "is not a regular file"),
        (tree.path("missing.png"), "No such file or directory"),
    ];
    let tg_fake = FakeTelegram::start(TG_TOKEN, &["5"]);
    let dc_fake = FakeDiscord::start(DC_TOKEN, &["9"]);
    let sl_fake = FakeSlack::start(SL_TOKEN, &["C1"]);
    let http = HttpOptions::default();
    let platforms: Vec<(Box<dyn Platform>, &str)> = vec![
        (
            Box::new(
                Telegram::with_options(TG_TOKEN, &tg_fake.url(), &http)
                    .with_media_roots(tree.roots()),
            ),
            "5",
        ),
        (
            Box::new(
                Discord::with_options(DC_TOKEN, &dc_fake.url(), &http)
                    .with_media_roots(tree.roots()),
            ),
            "9",
        ),
        (
            Box::new(
                Slack::with_options(SL_TOKEN, &sl_fake.url(), &http).with_media_roots(tree.roots()),
            ),
            "C1",
        ),
    ];
    for (platform, chat) in &platforms {
        let name = platform.name();
        let mut cases: Vec<(String, &str)> = refused.iter().map(|(p, w)| (p.clone(), *w)).collect();
        if have_fifo {
            cases.push((fifo.to_string_lossy().into_owned(), "is not a regular file"));
        }
        for (path, why) in cases {
            let payload = Payload {
                media: vec![path.clone()],
                ..Payload::text("see")
            };
            let f = failure(platform.deliver(chat, &send(SendOp::CREATE, payload, None)));
            assert!(f.permanent, "{name} {path}: {f:?}");
            assert!(
                f.reason.starts_with(&format!("media file {path}: ")) && f.reason.contains(why),
                "{name} {path}: {f:?}"
            );
        }
        // A link that stays inside the root is fine, uploaded under the name written.
        let payload = Payload {
            media: vec![tree.path("alias.png")],
            ..Payload::text("alias")
        };
        let out = platform.deliver(chat, &send(SendOp::CREATE, payload, None));
        assert!(out.is_delivered(), "{name}: {out:?}");
    }
    assert_eq!(
        tg_fake
            .messages("5")
            .into_iter()
            .map(|m| m.file)
            .collect::<Vec<_>>(),
        [Some("upload:alias.png:image/png:8".to_owned())]
    );
    assert_eq!(dc_fake.messages("9")[0].attachments, ["alias.png:8"]);
    assert_eq!(sl_fake.shares().len(), 1);
    assert_eq!(sl_fake.shares()[0].files[0].0, "alias.png");
    // The same file with no roots configured (the default): refused, whatever the link.
    let bare = Telegram::with_options(TG_TOKEN, &tg_fake.url(), &http);
    let payload = Payload {
        media: vec![tree.path("ok.png")],
        ..Payload::default()
    };
    let f = failure(bare.deliver("5", &send(SendOp::CREATE, payload, None)));
    assert!(
        f.permanent && f.reason.contains("no media roots are configured"),
        "{f:?}"
    );
}

fn slack(fake: &FakeSlack, tree: &Tree) -> Slack {
    Slack::with_options(SL_TOKEN, &fake.url(), &HttpOptions::default())
        .with_media_roots(tree.roots())
}

fn slack_methods(fake: &FakeSlack) -> Vec<String> {
    fake.calls().into_iter().map(|(m, _)| m).collect()
}

/// Slack's documented flow, call by call: an upload URL per file, the bytes to it (without
/// the token), then one `files.completeUploadExternal` sharing both in the channel, in the
/// thread replied to, with the send's text (escaped mrkdwn) as the comment.
#[test]
fn slack_shares_local_files_through_the_external_upload_flow() {
    let tree = Tree::new("slflow");
    let odd = tree.root().join("résumé 1 & co.pdf");
    let bytes = b"%PDF-1.7\r\n\0\xff--boundary?\r\n".to_vec();
    std::fs::write(&odd, &bytes).unwrap();
    let fake = FakeSlack::start(SL_TOKEN, &["C1"]);
    let payload = Payload {
        media: vec![
            tree.path("ok.png"),
            "https://example.com/a.gif".into(),
            odd.to_string_lossy().into_owned(),
        ],
        reply_to: Some(replystream::ReplyTarget::Id("1699999999.000001".into())),
        ..Payload::text("Files for <!channel> & you")
    };
    let out = slack(&fake, &tree).deliver("C1", &send(SendOp::CREATE, payload, None));
    // Slack shares asynchronously: its answer names no message.
    assert_eq!(out, Outcome::delivered(None));
    assert_eq!(
        slack_methods(&fake),
        [
            "files.getUploadURLExternal",
            "upload/v1/F00000001",
            "files.getUploadURLExternal",
            "upload/v1/F00000002",
            "files.completeUploadExternal",
        ]
    );
    let shares = fake.shares();
    assert_eq!(shares.len(), 1);
    let share = &shares[0];
    assert_eq!(share.channel, "C1");
    assert_eq!(share.thread_ts.as_deref(), Some("1699999999.000001"));
    assert_eq!(
        share.comment.as_deref(),
        Some("Files for &lt;!channel&gt; &amp; you\nhttps://example.com/a.gif")
    );
    assert_eq!(
        share.files,
        [
            ("ok.png".to_owned(), PNG.to_vec()),
            ("résumé 1 & co.pdf".to_owned(), bytes)
        ]
    );
    assert!(fake.uploads().iter().all(|u| !u.token_sent));
    // No message was posted besides the share.
    assert!(fake.texts("C1").is_empty());
}

/// A 429 on any of the three steps: the send is retried no earlier than its `Retry-After`,
/// from the start, and the files are shared once (an upload never completed is dropped).
#[test]
fn each_step_of_a_slack_upload_waits_out_its_429_and_shares_once() {
    for step in [
        "files.getUploadURLExternal",
        "upload/v1/F00000001",
        "files.completeUploadExternal",
    ] {
        let tree = Tree::new("sl429");
        let fake = FakeSlack::start(SL_TOKEN, &["C1"]);
        fake.fail_next_call_to(step, fake::slack::Fault::RateLimit(1));
        let reply = format!("Chart:\nMEDIA: {}\n", tree.path("ok.png"));
        let run = run(slack(&fake, &tree), "slack", "C1", &[reply], &tree.root());
        assert!(
            run.outcomes[0].all_delivered(),
            "{step}: {:?}",
            run.outcomes
        );
        // One attempt refused, with the wait; the next one delivered.
        let waits: Vec<Option<u64>> = run.failures.iter().map(|f| f.1.retry_after_ms).collect();
        assert_eq!(waits, [Some(1000)], "{step}: {:?}", run.failures);
        assert!(!run.failures[0].1.permanent);
        let shares = fake.shares();
        assert_eq!(shares.len(), 1, "{step}: {shares:?}");
        assert_eq!(shares[0].files, [("ok.png".to_owned(), PNG.to_vec())]);
        assert_eq!(shares[0].comment.as_deref(), Some("Chart:"));
        assert_eq!(fake.state.lock().unwrap().early_calls, 0, "{step}: early");
        let calls = fake.calls();
        let limited = calls.iter().position(|c| c.1 == 429).expect("the 429");
        assert_eq!(calls[limited].0, step);
        let log = fake.state.lock().unwrap().log.clone();
        let waited = log[limited + 1].2 - log[limited].2;
        assert!(
            waited >= Duration::from_secs(1),
            "{step}: retried after {waited:?}"
        );
        // The retry starts over: a fresh upload URL; the first upload was never shared.
        let shared: Vec<bool> = fake.uploads().iter().map(|u| u.shared).collect();
        let expected: &[bool] = match step {
            "files.getUploadURLExternal" => &[true],
            _ => &[false, true],
        };
        assert_eq!(shared, expected, "{step}");
    }
}

/// Slack's refusals on the upload methods read as its other errors do: `ok: false` with a
/// lasting error is permanent, with a passing one (`internal_error`) a retry; a refused
/// token is permanent and never shown.
#[test]
fn slack_upload_refusals_are_permanent_or_retried_as_documented() {
    let tree = Tree::new("slerr");
    let fake = FakeSlack::start(SL_TOKEN, &["C1"]);
    let sl = slack(&fake, &tree);
    let file = |text: &str| {
        let payload = Payload {
            media: vec![tree.path("ok.png")],
            ..Payload::text(text)
        };
        send(SendOp::CREATE, payload, None)
    };
    use fake::slack::Fault;
    fake.fail_next_call_to(
        "files.getUploadURLExternal",
        Fault::Error("file_uploads_disabled"),
    );
    let f = failure(sl.deliver("C1", &file("a")));
    assert!(f.permanent, "{f:?}");
    assert_eq!(
        f.reason,
        "files.getUploadURLExternal: 200 file_uploads_disabled"
    );
    fake.fail_next_call_to(
        "files.completeUploadExternal",
        Fault::Error("internal_error"),
    );
    let f = failure(sl.deliver("C1", &file("b")));
    assert!(!f.permanent && f.retry_after_ms.is_none(), "{f:?}");
    let f = failure(sl.deliver("C404", &file("c")));
    assert!(
        f.permanent && f.reason.ends_with("channel_not_found"),
        "{f:?}"
    );
    let wrong = Slack::with_options("xoxb-WRONG", &fake.url(), &HttpOptions::default())
        .with_media_roots(tree.roots());
    let f = failure(wrong.deliver("C1", &file("d")));
    assert!(f.permanent && f.reason.contains("invalid_auth"), "{f:?}");
    assert!(!f.reason.contains("WRONG"), "{f:?}");
    assert!(fake.shares().is_empty());
    // And the same send, once Slack is fine again, shares exactly once.
    assert!(sl.deliver("C1", &file("e")).is_delivered());
    assert_eq!(fake.shares().len(), 1);
    assert_eq!(fake.shares()[0].comment.as_deref(), Some("e"));
}

/// A final with a file that lands in an open preview stream: the file is shared first in
/// the thread (no comment), then the preview is finished with the text, so the reply shows
/// once; a 429 on finishing the preview does not share the file a second time.
#[test]
fn a_slack_final_with_a_file_finishes_the_preview_and_shares_the_file_once() {
    const ASKED: &str = "1699999999.000001";
    let tree = Tree::new("slprev");
    let fake = FakeSlack::start(SL_TOKEN, &["C9"]);
    fake.fail_next_call_to("chat.stopStream", fake::slack::Fault::RateLimit(1));
    let sl = slack(&fake, &tree);
    let key = replystream::MessageKey(0);
    let reply_to = Some(replystream::ReplyTarget::Id(ASKED.into()));
    let draft = Payload {
        reply_to: reply_to.clone(),
        ..Payload::text("The chart shows")
    };
    let started = sl.deliver("C9", &send(SendOp::Draft { key }, draft, None));
    assert!(started.is_delivered(), "{started:?}");
    let fin = Payload {
        media: vec![tree.path("ok.png")],
        reply_to,
        ..Payload::text("The chart shows growth.")
    };
    let mut fin = send(SendOp::CREATE, fin, None);
    fin.kind = SendKind::Final;
    let first = failure(sl.deliver("C9", &fin));
    assert_eq!(first.retry_after_ms, Some(1000), "{first:?}");
    std::thread::sleep(Duration::from_millis(1000));
    let second = sl.deliver("C9", &fin);
    assert!(second.is_delivered(), "{second:?}");
    let msgs = fake.messages("C9");
    assert_eq!(msgs.len(), 1, "the reply shows once: {msgs:?}");
    assert_eq!(msgs[0].text, "The chart shows growth.");
    assert!(msgs[0].streamed && !msgs[0].streaming);
    let shares = fake.shares();
    assert_eq!(shares.len(), 1, "the file is shared once: {shares:?}");
    assert_eq!(shares[0].thread_ts.as_deref(), Some(ASKED));
    assert_eq!(shares[0].comment, None);
    assert_eq!(
        slack_methods(&fake),
        [
            "chat.startStream",
            "files.getUploadURLExternal",
            "upload/v1/F00000001",
            "files.completeUploadExternal",
            "chat.stopStream",
            "chat.stopStream",
        ]
    );
}
