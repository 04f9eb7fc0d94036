//! Human delay between block sends (SPEC §7): never before the first block, never for tool
//! or final sends, drawn from the engine's seeded RNG.

mod common;

use common::*;
use replystream::{HumanDelay, Input, SendKind};

/// A seed whose first natural delay is the minimum, 800 ms.
fn seed_with_minimum_delay() -> u64 {
    (0..1_000_000u64)
        .find(|&s| HumanDelay::Natural.sample(&mut fastrand::Rng::with_seed(s)) == 800)
        .expect("some seed draws 800")
}

/// Two assistant messages, so two blocks that are never merged.
fn two_blocks(sim: &mut Sim) {
    sim.push(Input::MessageStart)
        .push(Input::TextDelta("The first block of the reply."))
        .push(Input::MessageEnd(None))
        .push(Input::MessageStart)
        .push(Input::TextDelta("The second block of the reply."))
        .push(Input::MessageEnd(None));
}

#[test]
fn natural_delay_at_its_minimum_is_exactly_800_ms() {
    let seed = seed_with_minimum_delay();
    let mut c = config("generic");
    c.human_delay = HumanDelay::Natural;
    let mut sim = Sim::new(replystream::Engine::new(c, seed).unwrap());
    two_blocks(&mut sim);
    sim.at(799);
    assert_eq!(
        sim.sends().len(),
        1,
        "the second block must not leave at +799 ms"
    );
    sim.at(800);
    let sends = sim.sends();
    assert_eq!(sends.len(), 2);
    assert_eq!(sends[0].0, 0, "no delay before the first block");
    assert_eq!(sends[1].0, 800);
}

#[test]
fn natural_delay_stays_within_bounds() {
    for seed in 0..50 {
        let mut c = config("generic");
        c.human_delay = HumanDelay::Natural;
        let mut sim = Sim::new(replystream::Engine::new(c, seed).unwrap());
        two_blocks(&mut sim);
        sim.run_until_idle();
        let sends = sim.sends();
        assert_eq!(sends.len(), 2);
        let gap = sends[1].0 - sends[0].0;
        assert!((800..=2500).contains(&gap), "seed {seed}: gap {gap}");
    }
}

#[test]
fn custom_delay_with_max_below_min_is_exactly_min() {
    let mut c = config("generic");
    c.human_delay = HumanDelay::Custom {
        min_ms: 1200,
        max_ms: 400,
    };
    let mut sim = Sim::new(engine(c));
    two_blocks(&mut sim);
    sim.at(1199);
    assert_eq!(sim.sends().len(), 1);
    sim.at(1200);
    assert_eq!(sim.sends().len(), 2);
    assert_eq!(sim.sends()[1].0, 1200);
}

#[test]
fn delay_counts_from_the_previous_ack() {
    let mut c = config("generic");
    c.human_delay = HumanDelay::Custom {
        min_ms: 1000,
        max_ms: 1000,
    };
    let mut sim = Sim::with_latency(engine(c), 300);
    two_blocks(&mut sim);
    sim.run_until_idle();
    let sends = sim.sends();
    // Block 1 leaves at 0 and is acked at 300; block 2 was queued at 0, so it waits
    // until its own delay after the queue is free: 300 + 1000.
    assert_eq!(sends[1].0, 1300);
}

#[test]
fn no_delay_for_tool_or_final_sends() {
    let mut c = config("generic");
    c.human_delay = HumanDelay::Custom {
        min_ms: 5000,
        max_ms: 5000,
    };
    c.block_streaming = false;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::TextDelta("Answer text."))
        .push(Input::ToolResult(replystream::Payload::text(
            "tool says hi",
        )))
        .push(Input::Finish)
        .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sim.sent_kinds(), [SendKind::Tool, SendKind::Final]);
    assert!(sends.iter().all(|(t, _)| *t == 0), "{sends:?}");
}

#[test]
fn off_means_back_to_back() {
    let mut sim = Sim::new(engine(config("generic")));
    two_blocks(&mut sim);
    sim.run_until_idle();
    assert!(sim.sends().iter().all(|(t, _)| *t == 0));
}
