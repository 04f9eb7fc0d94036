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
