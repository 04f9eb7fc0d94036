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

#[test]
fn defect_1a_table_header_and_delimiter_stay_together() {
    holds("1a");
}

#[test]
fn defect_1b_every_part_of_a_long_table_has_its_header() {
    holds("1b");
}

#[test]
fn defect_2_a_fence_in_a_list_item_stays_code() {
    holds("2");
}

#[test]
fn defect_3_a_long_link_stays_a_link() {
    holds("3");
}

#[test]
fn defect_4_a_long_bold_sentence_stays_bold() {
    holds("4");
}

#[test]
fn defect_5_a_long_code_span_stays_code() {
    holds("5");
}

#[test]
fn defect_6a_prefix_before_a_backtick_fence() {
    holds("6a");
}

#[test]
fn defect_6b_prefix_before_a_tilde_fence() {
    holds("6b");
}

#[test]
fn defect_7_a_too_long_opening_line_is_reopened_bare() {
    holds("7");
}

#[test]
fn defect_8a_line_cap_never_sends_fence_lines_alone() {
    holds("8a");
}

#[test]
fn defect_8b_line_cap_does_not_cut_words() {
    holds("8b");
}
