//! One test per numbered defect of issue 16 through the public Rust API (the engine on the
//! virtual clock, the platform splitter): the cases and what the user must see are in
//! `common::defects`, shared with the C ABI's and the CLI's tests. Ignored where today's code
//! still shows the defect, with its number.

mod common;

use common::defects::{Defect, Via, check, defect};
use replystream::sim::Sim;
use replystream::{
    ChannelProfile, Config, Engine, Input, Lane, LengthMetric, PlatformSplitter, SplitConfig,
    SplitMode,
};

/// The messages the chat shows for a case.
fn messages(d: &Defect) -> Vec<String> {
    match d.via {
        Via::Engine => {
            let mut c = Config::for_channel(&ChannelProfile::by_name(d.channel).expect("channel"));
            if let Some(limit) = d.limit {
                c.text_limit = limit;
            }
            if d.max_lines.is_some() {
                c.max_lines = d.max_lines;
            }
            c.response_prefix = d.prefix.map(str::to_owned);
            let mut sim = Sim::new(Engine::new(c, 7).expect("valid config"));
            sim.push(Input::MessageStart)
                .push(Input::TextDelta(&d.text))
                .push(Input::MessageEnd(None))
                .push(Input::Finish)
                .run_until_idle();
            assert!(sim.errors.is_empty(), "{:?}", sim.errors);
            assert!(sim.is_idle());
            sim.chat
                .lane_texts(Lane::Answer)
                .into_iter()
                .map(str::to_owned)
                .collect()
        }
        Via::Splitter => PlatformSplitter::new(SplitConfig {
            limit: d.limit.expect("a splitter case has a limit"),
            metric: LengthMetric::Chars,
            mode: SplitMode::Length,
            max_lines: d.max_lines,
            ..SplitConfig::default()
        })
        .expect("valid config")
        .split(&d.text)
        .into_iter()
        .map(|b| b.text)
        .collect(),
    }
}

fn holds(id: &str) {
    let d = defect(id);
    if let Err(e) = check(&d, &messages(&d)) {
        panic!("{e}");
    }
}

common::defects::numbered_defect_tests!(holds);
