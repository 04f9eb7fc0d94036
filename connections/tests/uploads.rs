//! Local files the model names, uploaded from the media roots only, with symbolic links
//! followed: real links in a temporary directory, real engines through the driver and the
//! worker-pool sink, against each platform's fake server. The engine admits a path lexically
//! (it does no I/O); the connection must see where the path really leads and refuse it for
//! good, without one byte of the file leaving and without a retry.
#![allow(clippy::disallowed_methods)] // real servers, real time, a real file system

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
use replystream_connections::{HttpOptions, MediaRoots, Outcome, Platform};

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
    failures: Vec<(SendKind, String)>,
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
                f.lock().unwrap().push((r.send.kind, fail.reason.clone()));
                assert!(fail.permanent, "{fail:?}");
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
        let stream = driver.open(chat, config.clone(), 7).unwrap();
        stream.text(reply).unwrap();
        stream.finish().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let before = outcomes.lock().unwrap().len();
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
    for ((kind, reason), path) in run.failures.iter().zip(&escapes) {
        assert_eq!(*kind, SendKind::Block);
        assert_eq!(
            reason,
            &format!(
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
