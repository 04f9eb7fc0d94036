//! Reply directives and media (SPEC §2, §5).

mod common;

use common::*;
use replystream::{Input, ReplyTarget};

#[test]
fn reply_to_split_across_deltas_is_sticky() {
    let mut sim = Sim::new(engine(small_config()));
    for d in [
        "[[repl",
        "y_to: abc]] First part of the answer here. ",
        "Second part of the answer follows.",
    ] {
        sim.push(Input::TextDelta(d));
    }
    sim.push(Input::Finish).run_until_idle();
    let sends = sim.sends();
    assert!(!sends.is_empty());
    for (_, s) in &sends {
        assert_eq!(
            s.payload.reply_to,
            Some(ReplyTarget::Id("abc".into())),
            "{s:?}"
        );
        assert!(!s.payload.text.contains("[["));
    }
}

#[test]
fn media_line_becomes_a_media_payload_with_caption() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta(
        "Here you go:\nMEDIA: https://example.com/cat.png\n",
    ))
    .push(Input::Finish)
    .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 1, "{sends:#?}");
    assert_eq!(sends[0].1.payload.media, ["https://example.com/cat.png"]);
    assert_eq!(sends[0].1.payload.text, "Here you go:");
}

#[test]
fn private_url_stays_text() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta("MEDIA: https://localhost/x.png"))
        .push(Input::Finish)
        .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 1);
    assert!(sends[0].1.payload.media.is_empty());
}

/// Sends for `text` streamed in `size`-char deltas on the generic profile, with the media
/// roots the local paths below live under.
fn sends_for(text: &str, size: usize) -> Vec<replystream::SendRequest> {
    let mut config = config("generic");
    config.media.roots = vec!["/tmp".into(), "/path".into(), "/Users".into()];
    let mut sim = Sim::new(engine(config));
    sim.stream(text, size, 0)
        .push(Input::Finish)
        .run_until_idle();
    sim.sends().into_iter().map(|(_, s)| s).collect()
}

#[test]
fn broken_reply_tags_at_the_start_are_removed_without_effect() {
    for size in [1, 2, 5, 100] {
        let sends = sends_for("[[reply_to_current] Visible reply", size);
        assert_eq!(sends.len(), 1);
        assert_eq!(sends[0].payload.text, "Visible reply");
        assert_eq!(sends[0].payload.reply_to, None);
        assert!(sends_for("[[reply_to:", size).is_empty());
        let sends = sends_for("[[reply_to:\nHello there.", size);
        assert_eq!(sends[0].payload.text, "Hello there.");
        assert_eq!(sends[0].payload.reply_to, None);
    }
    // Not at the start: literal text.
    let sends = sends_for("Visible reply\n[[reply_to_current] literally", 3);
    assert_eq!(
        sends[0].payload.text,
        "Visible reply\n[[reply_to_current] literally"
    );
}

#[test]
fn media_urls_lose_trailing_punctuation_and_json_tails() {
    for (line, url) in [
        (
            "MEDIA: https://example.com/a.png,",
            "https://example.com/a.png",
        ),
        (
            "MEDIA: https://example.com/a.png)",
            "https://example.com/a.png",
        ),
        (
            "MEDIA: https://example.com/a.png]",
            "https://example.com/a.png",
        ),
        (
            "MEDIA: https://example.com/a_(1).png",
            "https://example.com/a_(1).png",
        ),
        (
            "MEDIA:/path/to/image.png\"}],\"details\":{\"provider\":\"openai\"}",
            "/path/to/image.png",
        ),
        (
            "MEDIA:\"https://example.com/v.mp4?token=it\"s\"",
            "https://example.com/v.mp4?token=it\"s",
        ),
        (
            "MEDIA:/Users/pete/My Files/render final.png",
            "/Users/pete/My Files/render final.png",
        ),
    ] {
        for size in [1, 4, 200] {
            let sends = sends_for(&format!("Here:\n{line}\n"), size);
            assert_eq!(sends.len(), 1, "{line}: {sends:#?}");
            assert_eq!(sends[0].payload.media, [url], "{line}");
            assert_eq!(sends[0].payload.text, "Here:", "{line}: no stray text");
        }
    }
}

#[test]
fn a_path_with_spaces_is_never_cut_into_a_shorter_path() {
    let sends = sends_for(
        "MEDIA:/tmp/project screenshots/../../.env /tmp/safe/second.png\nDone.",
        3,
    );
    let media: Vec<&str> = sends
        .iter()
        .flat_map(|s| s.payload.media.iter().map(String::as_str))
        .collect();
    assert_eq!(media, ["/tmp/safe/second.png"]);
    let text: String = sends.iter().map(|s| s.payload.text.as_str()).collect();
    assert!(!text.contains(".env"), "{text}");
    assert!(sends_for("MEDIA:/tmp/project screenshots/../../.env", 2).is_empty());
}
