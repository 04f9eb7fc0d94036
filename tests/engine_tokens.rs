//! Silent and heartbeat tokens (SPEC §2).

mod common;

use common::*;
use replystream::Input;

fn reply(deltas: &[&str]) -> Vec<String> {
    let mut sim = Sim::new(engine(config("generic")));
    for d in deltas {
        sim.push(Input::TextDelta(d));
    }
    sim.push(Input::Finish).run_until_idle();
    sim.sent_texts()
}

#[test]
fn no_is_delivered() {
    assert_eq!(reply(&["N", "o"]), ["No"]);
    assert_eq!(reply(&["NO"]), ["NO"]);
}

#[test]
fn no_reply_is_silent() {
    assert!(reply(&["NO", "_RE", "PLY"]).is_empty());
    assert!(reply(&["  NO_REPLY \n"]).is_empty());
}

#[test]
fn trailing_token_is_stripped() {
    assert_eq!(reply(&["Done. ", "NO_", "REPLY"]), ["Done."]);
    assert_eq!(reply(&["interject.NO_REPLY"]), ["interject.NO_REPLY"]);
}

#[test]
fn heartbeat_alone_sends_nothing() {
    assert!(reply(&["HEARTBEAT_OK"]).is_empty());
    assert_eq!(reply(&["All good. HEARTBEAT_OK."]), ["All good."]);
}

/// The sent texts for `text` pushed whole, in two pieces at every char boundary, and char by
/// char: all must agree with `expected`.
fn reply_every_split(text: &str, expected: &[&str]) {
    assert_eq!(reply(&[text]), expected, "whole {text:?}");
    for (i, _) in text.char_indices().skip(1) {
        assert_eq!(
            reply(&[&text[..i], &text[i..]]),
            expected,
            "split at {i} of {text:?}"
        );
    }
    let chars: Vec<String> = text.chars().map(String::from).collect();
    let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(reply(&chars), expected, "char by char {text:?}");
}

#[test]
fn silent_forms_of_the_newest_openclaw_send_nothing() {
    for text in [
        "no_reply",
        "No_RePlY",
        "\"NO_REPLY\"",
        "**NO_REPLY**",
        "NO_REPLY.",
        "NO_REPLY NO_REPLY",
        "NO_REPLY\n\nNO_REPLY",
        "{\"action\":\"NO_REPLY\"}",
        "{\n  \"action\": \"NO_REPLY\"\n}",
        "<think>Inbox empty, calendar clear.</think>\nNO_REPLY",
        "<think type=\"internal\">Reasoning</think> NO_REPLY",
    ] {
        reply_every_split(text, &[]);
    }
}

#[test]
fn leading_and_trailing_forms_are_stripped() {
    reply_every_split(
        "NO_REPLYThe user is saying hello",
        &["The user is saying hello"],
    );
    reply_every_split(
        "NO_REPLY NO_REPLY\nThe user is saying hello",
        &["The user is saying hello"],
    );
    reply_every_split("some text **NO_REPLY", &["some text"]);
    reply_every_split("😄 NO_REPLY", &["😄"]);
}

#[test]
fn real_replies_are_sent() {
    for text in [
        "No",
        "NO_RE",
        "NO_REPLY -- nope",
        "NO_REPLY: explanation",
        "Please NO_REPLY to this",
        "interject.NO_REPLY",
    ] {
        reply_every_split(text, &[text]);
    }
}

#[test]
fn heartbeat_in_simple_markup_sends_nothing() {
    for text in [
        "<b>HEARTBEAT_OK</b>",
        "**HEARTBEAT_OK**",
        "<code>HEARTBEAT_OK</code>",
    ] {
        reply_every_split(text, &[]);
    }
    reply_every_split("All good! <b>HEARTBEAT_OK</b>", &["All good!"]);
    reply_every_split("<code>HEARTBEAT_OK</code> all good", &["all good"]);
}

/// Token rules apply to the reply's edges, never to the seams between its blocks: a
/// paragraph in the middle that ends in the silent token, or one that starts with the
/// heartbeat, keeps its words, in the blocks and in the final.
#[test]
fn tokens_between_blocks_inside_a_reply_are_words() {
    let text = "The first paragraph is long enough to be a block of its own. NO_REPLY\n\n\
                HEARTBEAT_OK is what the monitor prints when all is well.\n\n\
                The last paragraph ends the reply. NO_REPLY";
    let run = |c: &replystream::Config, size: usize| {
        let mut sim = Sim::new(engine(c.clone()));
        sim.stream(text, size, 0)
            .push(Input::Finish)
            .run_until_idle();
        sim.delivered_texts()
    };
    for size in [1, 3, 7, 200] {
        for streaming in [true, false] {
            let mut c = small_config();
            c.coalesce_idle_ms = 0;
            c.block_streaming = streaming;
            let with_tokens = run(&c, size);
            c.silent_token = None;
            c.heartbeat_token = None;
            let mut plain = run(&c, size);
            // The only difference: the reply's trailing token.
            let last = plain.pop().unwrap();
            let last = last
                .strip_suffix(" NO_REPLY")
                .or_else(|| last.strip_suffix("NO_REPLY"));
            let last = last.unwrap().trim_end();
            if !last.is_empty() {
                plain.push(last.to_string());
            }
            assert_eq!(with_tokens, plain, "size {size}, streaming {streaming}");
            assert!(with_tokens.len() > 1 || !streaming, "{with_tokens:?}");
            let all = with_tokens.concat();
            assert!(
                all.contains("own. NO_REPLY") || all.contains("NO_REPLY\n\nHEARTBEAT_OK"),
                "{all:?}"
            );
            assert!(all.contains("HEARTBEAT_OK is what"), "{all:?}");
        }
    }
}

/// A silent JSON action text beside a media directive: the media goes alone.
#[test]
fn json_action_text_with_media_keeps_the_media() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta(
        "{\"action\":\"NO_REPLY\"}\nMEDIA: https://example.com/img.png\n",
    ))
    .push(Input::Finish)
    .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 1, "{sends:#?}");
    assert_eq!(sends[0].1.payload.text, "");
    assert_eq!(sends[0].1.payload.media, ["https://example.com/img.png"]);
    // The same as a host payload.
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::Media(replystream::Payload {
        text: "{\"action\":\"NO_REPLY\"}".into(),
        media: vec!["https://example.com/img.png".into()],
        ..Default::default()
    }))
    .push(Input::ToolResult(replystream::Payload::text("no_reply")))
    .push(Input::Finish)
    .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 1, "{sends:#?}");
    assert_eq!(sends[0].1.payload.text, "");
    assert_eq!(sends[0].1.payload.media, ["https://example.com/img.png"]);
}

/// A token is a whole word (issue 20, item 9): the silent token glued to more letters at the
/// start of a reply is stripped only where the glue visibly starts a new word (a change of
/// letter case or of script, as in `NO_REPLYThe user…`); glued letters of the token's own
/// case, or digits, make another word, and the reply is sent whole.
#[test]
fn a_silent_token_glued_into_a_word_is_part_of_it() {
    for text in [
        "NO_REPLYX",
        "NO_REPLYX is the flag name",
        "NO_REPLYING",
        "NO_REPLY42",
        "no_replyx and more",
        "NO_REPLYÉTÉ",
    ] {
        reply_every_split(text, &[text]);
    }
    reply_every_split("NO_REPLYhello there", &["hello there"]);
    reply_every_split("no_replyThe user", &["The user"]);
    reply_every_split("NO_REPLY好的", &["好的"]);
    reply_every_split("NO_REPLYÉtienne a dit", &["Étienne a dit"]);
}
