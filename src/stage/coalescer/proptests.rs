//! Property tests of the coalescer: merged texts show the source, in order, within the limits.

use crate::text::block::Block;
use crate::text::chunker::BreakPreference;
use crate::{LengthMetric, Time};

use super::*;
use proptest::prelude::*;

/// One block of the source: a word run and the separator after it; `boundary` ends a
/// text block there (the joiner may follow).
#[derive(Clone, Debug)]
struct Part {
    words: String,
    sep: &'static str,
    boundary: bool,
}

#[derive(Clone, Debug)]
enum Step {
    Block(Part),
    Timer(u64),
    Flush,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => ("[a-zé🦀]{1,6}(-[a-zé🦀\u{301}]{1,5}){0,4}",
              prop::sample::select(vec!["", " ", "\n", "\n\n", "  \n", " \n\n  "]),
              prop::bool::weighted(0.2))
            .prop_map(|(words, sep, boundary)| Step::Block(Part { words, sep, boundary })),
        2 => (0u64..3000).prop_map(Step::Timer),
        1 => Just(Step::Flush),
    ]
}

fn preference() -> impl Strategy<Value = BreakPreference> {
    prop_oneof![
        Just(BreakPreference::Paragraph),
        Just(BreakPreference::Newline),
        Just(BreakPreference::Sentence),
    ]
}

fn metric() -> impl Strategy<Value = LengthMetric> {
    prop::sample::select(LengthMetric::ALL.to_vec())
}

proptest! {
    #[test]
    fn bounded_and_exact(
        steps in prop::collection::vec(step(), 0..60),
        min in 1usize..40,
        max in 1usize..60,
        idle in 0u64..2000,
        pref in preference(),
        metric in metric(),
        paragraph in any::<bool>(),
        max_lines in prop::option::of(1usize..8),
    ) {
        let config = CoalescerConfig {
            min, max, idle_ms: idle, break_preference: pref,
            flush_on_enqueue: paragraph, metric, max_lines,
            ..CoalescerConfig::default()
        };
        let mut c = Coalescer::new(config);
        let max = c.config().max;
        let joiner = c.config().joiner();
        // The whole source first, so blocks can index it.
        let mut src = String::new();
        let mut ranges = Vec::new();
        for s in &steps {
            if let Step::Block(p) = s {
                ranges.push((src.len()..src.len() + p.words.len(), p.boundary));
                src.push_str(&p.words);
                src.push_str(p.sep);
            }
        }
        let mut out = Vec::new();
        let mut now = 0u64;
        let mut next = 0;
        let mut boundaries = Vec::new();
        for s in steps {
            match s {
                Step::Block(p) => {
                    let (range, boundary) = ranges[next].clone();
                    next += 1;
                    let b = Block {
                        text: p.words.clone(),
                        sep: p.sep.to_owned(),
                        source: range.clone(),
                        ..Block::default()
                    };
                    c.push_block(b, &BlockMeta::default(), Some(&src), Time::from_millis(now), &mut out);
                    if boundary {
                        c.end_of_text();
                        boundaries.push(range.end);
                    }
                }
                Step::Timer(dt) => {
                    now += dt;
                    c.on_timer(Time::from_millis(now), &mut out);
                }
                Step::Flush => c.flush(&mut out),
            }
            if let Some(d) = c.deadline() {
                prop_assert!(idle > 0 && d.as_millis() > now);
            }
            prop_assert!(c.buffered_len() < max);
        }
        c.flush(&mut out);

        let mut covered = 0usize;
        for merged in &out {
            let first = merged.sources[0].start;
            prop_assert!(first >= covered, "in order: {:?}", merged);
            prop_assert!(src[covered..first].trim().is_empty(), "nothing skipped");
            // Never above max unless one block alone is at least max.
            if metric.len(&merged.text) > max {
                prop_assert_eq!(merged.sources.len(), 1, "over max only alone: {:?}", merged);
            }
            if let Some(cap) = max_lines && merged.sources.len() > 1 {
                prop_assert!(merged.text.split('\n').count() <= cap, "line cap: {:?}", merged);
            }
            // Exactly the source per range; the joiner between ranges, only at a
            // text boundary; no separator at either end.
            let mut want = String::new();
            for (i, r) in merged.sources.iter().enumerate() {
                if i > 0 {
                    prop_assert!(boundaries.iter().any(|&q| q >= merged.sources[i - 1].end && q <= r.start));
                    want.push_str(joiner);
                }
                want.push_str(&src[r.clone()]);
            }
            prop_assert_eq!(&merged.text, want.trim());
            if paragraph {
                prop_assert_eq!(merged.sources.len(), 1);
            }
            covered = merged.sources.last().unwrap().end;
        }
        prop_assert!(src[covered..].trim().is_empty(), "nothing lost");
    }
}
