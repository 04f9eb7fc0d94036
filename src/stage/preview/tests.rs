use super::render::{PreviewRenderer, REASONING_UNITS, RenderConfig, TAIL_HEADER, TAIL_UNITS};
use super::*;
use crate::text::metric::LengthMetric;
use unicode_segmentation::UnicodeSegmentation;

#[path = "../../../tests/preview_checks/fences.rs"]
mod fences;
use fences::fences_balanced;

fn t(ms: u64) -> Time {
    Time::from_millis(ms)
}

fn state(transport: PreviewTransport) -> PreviewState {
    PreviewState::new(PreviewPolicy {
        throttle_ms: 1000,
        transport,
    })
}

/// Marks the content changed, renders `text` (all of it content) and sends it at `now`.
fn send(s: &mut PreviewState, text: &str, now: Time) -> Update {
    s.mark_dirty();
    let update = s.prepare(text, text.len());
    if let Update::Send(op) = update {
        s.on_sent(op.key().unwrap(), now);
    }
    update
}

#[test]
fn create_then_edits_under_one_key() {
    let mut s = state(PreviewTransport::Edit);
    assert_eq!(s.ready_at(), None, "nothing to show yet");
    s.mark_dirty();
    assert_eq!(
        s.ready_at(),
        Some(Time::ZERO),
        "the first update is due at once"
    );
    let key = MessageKey(1);
    assert_eq!(
        s.prepare("Hello", 5),
        Update::Send(SendOp::Create { key: Some(key) })
    );
    s.on_sent(key, t(100));
    assert!(s.has_message(), "a create in flight counts as the message");
    s.mark_dirty();
    assert_eq!(s.ready_at(), None, "never while one is in flight");
    s.on_delivered(key, "Hello".into());
    assert_eq!(
        s.ready_at(),
        Some(t(1100)),
        "one window after the create left"
    );
    assert_eq!(
        s.prepare("Hello world", 11),
        Update::Send(SendOp::Edit { key })
    );
}

#[test]
fn drafts_use_the_draft_op_throughout() {
    let mut s = state(PreviewTransport::Draft);
    let key = MessageKey(1);
    assert_eq!(
        send(&mut s, "Hello", t(0)),
        Update::Send(SendOp::Draft { key })
    );
    s.on_delivered(key, "Hello".into());
    assert_eq!(
        send(&mut s, "Hello there", t(1000)),
        Update::Send(SendOp::Draft { key })
    );
}

#[test]
fn identical_and_regressive_texts_are_not_sent_and_cost_no_window() {
    let mut s = state(PreviewTransport::Edit);
    let key = MessageKey(1);
    send(&mut s, "Hello world█", t(0));
    s.on_delivered(key, "Hello world█".into());
    s.mark_dirty();
    assert_eq!(s.prepare("Hello world█", 11), Update::Identical);
    assert_eq!(s.ready_at(), None, "clean after a skip");
    s.mark_dirty();
    assert_eq!(
        s.prepare("Hello█", 5),
        Update::Regressive,
        "content is a strict prefix of the content shown"
    );
    s.mark_dirty();
    assert_eq!(
        s.prepare("Hello world!█", 12),
        Update::Send(SendOp::Edit { key })
    );
    // The window still counts from the create at 0, not from the skips.
    s.on_sent(key, t(1000));
    s.on_delivered(key, "Hello world!█".into());
    s.mark_dirty();
    assert_eq!(s.ready_at(), Some(t(2000)));
}

#[test]
fn a_rate_limit_pauses_exactly_and_doubles_the_window_up_to_ten_seconds() {
    let mut s = state(PreviewTransport::Edit);
    let key = MessageKey(1);
    send(&mut s, "a", t(0));
    s.on_delivered(key, "a".into());
    send(&mut s, "ab", t(1000));
    s.on_failed(key, Some(3500), false, t(1200));
    assert_eq!(s.throttle_ms(), 2000);
    assert_eq!(
        s.ready_at(),
        Some(t(4700)),
        "the failed text is not shown: an update is wanted, not before retry_after"
    );
    // Each further limit doubles again, up to 10 s; a success does not undo it.
    s.on_sent(key, t(4700));
    s.on_failed(key, Some(100), false, t(4800));
    assert_eq!(s.throttle_ms(), 4000);
    s.on_sent(key, t(8800));
    s.on_delivered(key, "ab".into());
    for _ in 0..4 {
        send(&mut s, "abc", t(20_000));
        s.on_failed(key, Some(1), false, t(20_000));
        s.on_sent(key, t(30_000));
        s.on_delivered(key, "x".into());
    }
    assert_eq!(s.throttle_ms(), MAX_BACKOFF_THROTTLE_MS);
    assert!(
        !s.is_degraded(),
        "successes in between reset the failure count"
    );

    // A configured window above the cap is kept as it is.
    let mut slow = PreviewState::new(PreviewPolicy {
        throttle_ms: 20_000,
        transport: PreviewTransport::Edit,
    });
    send(&mut slow, "a", t(0));
    slow.on_failed(key, Some(10), false, t(5));
    assert_eq!(slow.throttle_ms(), 20_000);
}

#[test]
fn three_failures_in_a_row_or_one_permanent_degrade() {
    let mut s = state(PreviewTransport::Edit);
    let key = MessageKey(1);
    for i in 0..MAX_CONSECUTIVE_FAILURES {
        assert!(!s.is_degraded());
        send(&mut s, "text", t(u64::from(i) * 5000));
        s.on_failed(key, None, false, t(u64::from(i) * 5000 + 10));
    }
    assert!(s.is_degraded());
    assert_eq!(s.ready_at(), None, "a degraded preview stops updating");

    let mut s = state(PreviewTransport::Edit);
    send(&mut s, "text", t(0));
    s.on_failed(key, None, true, t(10));
    assert!(s.is_degraded());
}

#[test]
fn segments_get_new_keys_and_report_their_message() {
    let mut s = state(PreviewTransport::Edit);
    send(&mut s, "one", t(0));
    let closed = s.close_segment().unwrap();
    assert_eq!(closed.key, MessageKey(1));
    assert!(closed.has_message && closed.in_flight);
    assert_eq!(closed.shown, "");
    assert!(s.close_segment().is_none());
    // The late ack of the closed segment frees the preview for the next one.
    s.on_delivered(MessageKey(1), "one".into());
    assert_eq!(
        send(&mut s, "two", t(1000)),
        Update::Send(SendOp::Create {
            key: Some(MessageKey(2))
        })
    );
    // A segment whose create failed has no message.
    s.on_failed(MessageKey(2), None, false, t(1010));
    let closed = s.close_segment().unwrap();
    assert!(!closed.has_message);
}

// ---- the renderer -------------------------------------------------------------------

fn renderer(metric: LengthMetric, limit: usize, cursor: Option<&str>) -> PreviewRenderer {
    PreviewRenderer::new(RenderConfig {
        metric,
        limit,
        cursor: cursor.map(str::to_owned),
        expandable_quote: false,
        posted: None,
    })
}

fn render(r: &mut PreviewRenderer, answer: &str, reasoning: &str) -> (String, usize) {
    let mut out = String::new();
    let body = r.render(answer, reasoning, None, &mut out);
    (out, body)
}

#[test]
fn whole_text_with_cursor_when_it_fits() {
    let mut r = renderer(LengthMetric::Utf16, 4096, Some("█"));
    assert_eq!(render(&mut r, "Hello", ""), ("Hello█".into(), 5));
    // Trailing whitespace is not shown: the text grows, the render does not change.
    assert_eq!(render(&mut r, "Hello \n", ""), ("Hello█".into(), 5));
    assert_eq!(
        render(&mut r, "Hello \nworld", ""),
        ("Hello \nworld█".into(), 12)
    );
    let mut out = String::new();
    let mut r = renderer(LengthMetric::Utf16, 4096, None);
    r.render("Hi there", "", Some("[bot]"), &mut out);
    assert_eq!(
        out, "[bot] Hi there",
        "the prefix, joined by a space, and no cursor"
    );
    r.reset();
    r.render("[bot] Hi", "", Some("[bot]"), &mut out);
    assert_eq!(out, "[bot] Hi", "never twice");
}

#[test]
fn an_open_fence_is_closed_with_the_cursor_inside() {
    let mut r = renderer(LengthMetric::Chars, 4000, Some("█"));
    let (out, body) = render(&mut r, "Code:\n```rust\nfn main() {", "");
    assert_eq!(out, "Code:\n```rust\nfn main() {█\n```");
    assert_eq!(&out[..body], "Code:\n```rust\nfn main() {");
    r.reset();
    let (out, _) = render(&mut r, "Code:\n```rust", "");
    assert_eq!(
        out, "Code:\n```rust\n█\n```",
        "the cursor is not an info string"
    );
    r.reset();
    let (out, _) = render(&mut r, "Code:\n```rust\n", "");
    assert_eq!(out, "Code:\n```rust\n█\n```");
    r.reset();
    let (out, _) = render(&mut r, "```\nx\n```", "");
    assert_eq!(
        out, "```\nx\n```\n█",
        "a closing line being written closes it"
    );
    r.reset();
    let (out, _) = render(&mut r, "```\nx\n```\n\n", "");
    assert_eq!(out, "```\nx\n```\n█", "the cursor never joins a fence line");
    r.reset();
    let (out, _) = render(&mut r, "````\nx\n```", "");
    assert_eq!(
        out, "````\nx\n```\n█\n````",
        "three backticks do not close four"
    );
}

#[test]
fn overflow_shows_a_tail_window_behind_a_header() {
    let text: String = (0..400)
        .map(|i| format!("line {i} of the reply\n"))
        .collect();
    let mut r = renderer(LengthMetric::Utf16, 4096, Some("█"));
    let (out, body) = render(&mut r, &text, "");
    let len = LengthMetric::Utf16.len(&out);
    assert!(len <= 4096, "{len}");
    let (header, window) = out.split_once('\n').unwrap();
    assert_eq!(header, TAIL_HEADER);
    let window = window.strip_suffix('█').unwrap();
    assert_eq!(body, out.len() - '█'.len_utf8());
    assert!(
        text.trim_end().ends_with(window),
        "the window is the end of the text"
    );
    assert!(window.starts_with("line "), "it starts at a line start");
    let units = LengthMetric::Utf16.len(window);
    assert!(units <= TAIL_UNITS && units > TAIL_UNITS - 40, "{units}");
}

#[test]
fn a_window_never_starts_with_a_table_delimiter_row() {
    // The window's natural start falls `k` bytes before the delimiter row, inside the header
    // row: snapped to the next line start, it would begin with the delimiter row, which
    // alone reads as text. It begins at the first body row instead.
    let filler = "filler line\n".repeat(50);
    let (header, delimiter) = ("| Header | Value |\n", "|---|---|\n");
    let mut shown_rows = 0;
    for k in 1..40 {
        let mut rows = String::new();
        while rows.len() + 10 <= TAIL_UNITS - k {
            rows.push_str("| r | v |\n");
        }
        rows.push_str(&"y".repeat(TAIL_UNITS - k - rows.len()));
        let text = format!("{filler}{header}{delimiter}{rows}");
        let mut r = renderer(LengthMetric::Chars, 4096, None);
        let (out, _) = render(&mut r, &text, "");
        let (head, window) = out.split_once('\n').unwrap();
        assert_eq!(head, TAIL_HEADER);
        let lines: Vec<&str> = window.split('\n').collect();
        assert!(!lines[0].starts_with("|---"), "k {k}: {:?}", lines[0]);
        if lines[0].starts_with('|') {
            // Among the body rows: the header and delimiter rows are shown on top again.
            assert_eq!(
                format!("{}\n{}\n", lines[0], lines[1]),
                format!("{header}{delimiter}"),
                "k {k}"
            );
            assert!(lines[2].starts_with("| r |"), "k {k}: {:?}", lines[2]);
            shown_rows += 1;
        }
    }
    assert!(shown_rows > 0, "some windows start among the body rows");
}

#[test]
fn a_window_inside_a_fence_reopens_it_and_closes_it() {
    let mut text = String::from("Intro\n\n```python\n");
    for i in 0..300 {
        text.push_str(&format!("print({i})  # a line of code\n"));
    }
    let mut r = renderer(LengthMetric::Utf16, 4096, Some("█"));
    let (out, _) = render(&mut r, &text, "");
    assert!(LengthMetric::Utf16.len(&out) <= 4096);
    assert!(out.starts_with("…\n```python\nprint("), "{}", &out[..40]);
    assert!(out.ends_with("█\n```"));
    assert!(fences_balanced(&out));
    // The fence closes; the window moves past it: nothing to reopen.
    text.push_str("```\n\n");
    for i in 0..200 {
        text.push_str(&format!("After the code, sentence {i}.\n"));
    }
    let (out, _) = render(&mut r, &text, "");
    assert!(out.starts_with("…\nAfter the code"), "{}", &out[..40]);
    assert!(fences_balanced(&out));
}

#[test]
fn the_window_never_starts_inside_a_grapheme() {
    // No line breaks: the window start is decided by units alone.
    let family = "👨‍👩‍👧‍👦";
    let accented = "e\u{301}";
    for unit in [family, accented, "🇫🇷", "字"] {
        for metric in LengthMetric::ALL {
            for limit in [64, 100, 257] {
                let text = unit.repeat(300);
                let mut r = renderer(metric, limit, Some("█"));
                let (out, _) = render(&mut r, &text, "");
                assert!(metric.len(&out) <= limit, "{metric:?} {limit}");
                let window = out.strip_prefix("…\n").unwrap().strip_suffix('█').unwrap();
                assert!(!window.is_empty());
                assert!(
                    window.graphemes(true).all(|g| g == unit),
                    "{metric:?} {limit}: the window starts or ends inside a cluster"
                );
            }
        }
    }
}

#[test]
fn reasoning_is_quoted_above_and_capped_to_its_tail() {
    let mut r = renderer(LengthMetric::Utf16, 4096, Some("█"));
    let (out, body) = render(&mut r, "The answer", "First thought.\n\nSecond thought.");
    assert_eq!(out, "> First thought.\n>\n> Second thought.\n\nThe answer█");
    assert_eq!(&out[body..], "█");
    r.reset();
    let (out, _) = render(&mut r, "", "Thinking...");
    assert_eq!(out, "> Thinking...\n\n█", "only reasoning so far");

    let long: String = (0..200).map(|i| format!("step {i}; ")).collect();
    let mut r = renderer(LengthMetric::Utf16, 4096, None);
    let (out, _) = render(&mut r, "Answer", &long);
    let quote = out.strip_suffix("\n\nAnswer").unwrap();
    let shown = quote.strip_prefix("> … ").unwrap();
    assert!(long.trim().ends_with(shown));
    assert!(LengthMetric::Utf16.len(shown) <= REASONING_UNITS);

    let mut r = PreviewRenderer::new(RenderConfig {
        metric: LengthMetric::Utf16,
        limit: 4096,
        cursor: None,
        expandable_quote: true,
        posted: None,
    });
    let (out, _) = render(&mut r, "Answer", "one\ntwo");
    assert_eq!(out, "**> one\n> two||\n\nAnswer");
    r.reset();
    let (out, body) = render(&mut r, "", "one");
    assert_eq!(
        (out.as_str(), body),
        ("**> one||", 9),
        "no cursor, no answer"
    );
}

#[test]
fn reasoning_and_a_long_answer_share_the_limit() {
    let long_reasoning = "hmm ".repeat(500);
    let answer = "word ".repeat(2000);
    for metric in LengthMetric::ALL {
        let mut r = renderer(metric, 4096, Some("█"));
        let (out, _) = render(&mut r, &answer, &long_reasoning);
        assert!(metric.len(&out) <= 4096);
        assert!(out.starts_with("> …"));
        assert!(out.contains("\n\n…\n"), "the tail header follows the quote");
    }
}

/// A small deterministic generator (no external crate needed in unit tests).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn growing_texts_always_render_within_the_limit_with_balanced_fences() {
    const PIECES: &[&str] = &[
        "word ",
        "Sentence. ",
        "\n",
        "\n\n",
        "```rust\n",
        "```\n",
        "~~~~\n",
        "~~~~\n",
        "   ```\n",
        "`inline` ",
        "``` not a fence ``` ",
        "\tcode\n",
        "👨‍👩‍👧",
        "e\u{301}",
        "字字字",
        "\r\n",
        "    indented\n",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ];
    let mut rng = Lcg(42);
    for round in 0..60 {
        let metric = LengthMetric::ALL[round % 4];
        let limit = [40, 64, 200, 700][round / 4 % 4];
        let cursor = [Some("█"), None, Some("▌▌")][round % 3];
        let mut r = renderer(metric, limit, cursor);
        let mut text = String::new();
        for _ in 0..400 {
            text.push_str(PIECES[rng.below(PIECES.len())]);
            if rng.below(3) > 0 {
                continue;
            }
            let (out, body) = render(&mut r, &text, "");
            assert!(
                metric.len(&out) <= limit,
                "round {round}: {} > {limit}",
                metric.len(&out)
            );
            assert!(fences_balanced(&out), "round {round}: {out:?}");
            assert!(out.is_char_boundary(body));
            let content = &out[..body];
            let shown = content.strip_prefix("…\n").unwrap_or(content);
            // The content is the text's end, apart from a reopened fence line at its top.
            let tail = shown.split_once('\n').map_or(shown, |(first, rest)| {
                if text.trim_end().ends_with(shown) {
                    shown
                } else {
                    assert!(first.trim_start().starts_with(['`', '~']), "{first:?}");
                    rest
                }
            });
            assert!(
                text.trim_end().ends_with(tail),
                "round {round}: {tail:?} is not the end of the text"
            );
            if let Some(c) = cursor {
                assert!(out[body..].starts_with(c) || out[body..].starts_with(&format!("\n{c}")));
            }
        }
    }
}

/// A long reply rendered every 250 ms as 1-char deltas arrive every 51 ms (as the engine
/// does on Discord): the tail window's budget changes by a few units between renders (a fence
/// opens or closes at the end), which once let a window start before the previous one, in
/// text the scanner had dropped, and inside a closing fence line.
#[test]
fn a_window_never_moves_back_into_dropped_text() {
    let text = include_str!("../../../tests/data/node-events.md");
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    // The first 30 000 chars hold the case that failed (offset 14, 27 098 chars).
    let bounds = &bounds[..30_000];
    for offset in [14, 29] {
        let mut r = renderer(LengthMetric::Chars, 2000, None);
        let mut t = 30 * 51 + offset;
        let mut last_start = 0;
        loop {
            let k = (t / 51) as usize;
            if k >= bounds.len() {
                break;
            }
            let so_far = &text[..bounds[k]];
            let (out, body) = render(&mut r, so_far, "");
            assert!(
                LengthMetric::Chars.len(&out) <= 2000,
                "offset {offset}, {k} chars"
            );
            assert!(fences_balanced(&out), "offset {offset}, {k} chars: {out:?}");
            if let Some(window) = out[..body].strip_prefix("…\n") {
                // The window's text, after a reopened fence line if there is one.
                let shown = match window.split_once('\n') {
                    Some((first, rest)) if !so_far.contains(window) => {
                        assert!(
                            first.starts_with("```") || first.starts_with("~~~"),
                            "{first:?}"
                        );
                        rest
                    }
                    _ => window,
                };
                let start = so_far.trim_end().len() - shown.len();
                assert_eq!(&so_far[start..so_far.trim_end().len()], shown);
                assert!(
                    start >= last_start,
                    "offset {offset}, {k} chars: the window moved back"
                );
                last_start = start;
            }
            t += 250;
        }
    }
}

#[test]
fn open_inline_code_and_emphasis_are_closed_before_the_cursor() {
    let cases = [
        ("Intro **bold wor", "Intro **bold wor**█"),
        ("Run `cargo te", "Run `cargo te`█"),
        ("A ~~gone and *it", "A ~~gone and *it*~~█"),
        ("**Bold `co", "**Bold `co`**█"),
        // Closed already, or a closing run arriving, or inside a fence: as it is.
        ("Done **bold** here", "Done **bold** here█"),
        ("Intro **bold wor*", "Intro **bold wor*█"),
        ("snake_case and 2 * 3", "snake_case and 2 * 3█"),
    ];
    for (answer, shown) in cases {
        let mut r = renderer(LengthMetric::Chars, 4000, Some("█"));
        let (out, body) = render(&mut r, answer, "");
        assert_eq!(out, shown, "{answer:?}");
        assert_eq!(&out[..body], answer, "the delimiters are not content");
    }
    let mut r = renderer(LengthMetric::Chars, 4000, Some("█"));
    let (out, _) = render(&mut r, "```\n**not bold", "");
    assert_eq!(out, "```\n**not bold█\n```");
}

#[test]
fn a_window_never_starts_at_a_tables_delimiter_row() {
    // Tables of every length around the window's size: for some, the window's first choice
    // falls in the header row and snaps to the line after it, the delimiter row.
    let head = "| Item | Cost |\n|---|---|\n";
    let mut first_rows = 0;
    let intro = "An intro paragraph long enough to push the reply past the limit. ".repeat(8);
    for rows in 150..260 {
        let mut text = format!("{intro}\n\n{head}");
        for i in 0..rows {
            text.push_str(&format!("| row {i} | {i} |\n"));
        }
        let mut r = renderer(LengthMetric::Chars, 4000, Some("█"));
        let (out, _) = render(&mut r, &text, "");
        let Some(window) = out.strip_prefix("…\n") else {
            continue;
        };
        assert!(!window.starts_with("|---"), "{rows}: {}", &window[..30]);
        if window.starts_with('|') {
            // Among the body rows: the header and delimiter rows are shown on top again.
            assert!(window.starts_with(head), "{rows}: {}", &window[..30]);
            assert!(window[head.len()..].starts_with("| row "), "{rows}");
            first_rows += 1;
        }
    }
    assert!(first_rows > 0, "no window started by the header");
}

#[test]
fn a_window_among_a_tables_body_rows_shows_its_header_again() {
    // A table much longer than the preview: every window (one per 4-row step) starts among
    // its body rows, shows the header and delimiter rows on top, then rows in order, and
    // stays within the limit. Rows end in a wide char to test the metric.
    let head = "| Day | What | Cost |\n|:--|---|--:|\n";
    let mut text = format!("Here is the plan.\n\n{head}");
    let mut r = renderer(LengthMetric::Utf16, 1000, Some("█"));
    let mut windows = 0;
    for i in 0..400 {
        text.push_str(&format!("| {i} | walk 😀 | {i}0 |\n"));
        if i % 4 != 3 || text.len() < 1200 {
            continue;
        }
        let (out, _) = render(&mut r, &text, "");
        assert!(LengthMetric::Utf16.len(&out) <= 1000, "{i}: {}", out.len());
        let window = out.strip_prefix("…\n").expect("a tail window");
        assert!(window.starts_with(head), "{i}: {:?}", &window[..40]);
        let rows = &window[head.len()..];
        assert!(rows.starts_with("| "), "{i}: {rows:?}");
        assert!(
            text.contains(rows.trim_end_matches('█')),
            "{i}: rows in order"
        );
        windows += 1;
    }
    assert!(windows > 50);
}
