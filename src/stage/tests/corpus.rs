//! The text stages over the sample replies in tests/data: the pipeline's output does not
//! depend on how the text is split into deltas, and files without any stage syntax pass
//! through unchanged.

use crate::stage::tests::{Wired, wired};

/// The pipeline over `text` pushed in pieces of `piece` bytes (moved to char boundaries).
fn pipeline(text: &str, piece: usize) -> Wired {
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = start.saturating_add(piece).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    wired(&pieces)
}

fn corpus() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

#[test]
fn split_invariant_over_the_corpus() {
    for (name, text) in corpus() {
        let whole = pipeline(&text, usize::MAX);
        for piece in [1, 3, 4, 7, 64] {
            assert_eq!(pipeline(&text, piece), whole, "{name} in pieces of {piece}");
        }
    }
}

#[test]
fn text_without_stage_syntax_passes_through() {
    let markers = [
        "think",
        "thought",
        "final",
        "MEDIA:",
        "[[",
        "NO_REPLY",
        "HEARTBEAT_OK",
    ];
    let mut checked = 0;
    for (name, text) in corpus() {
        if markers
            .iter()
            .any(|m| text.to_ascii_lowercase().contains(&m.to_ascii_lowercase()))
        {
            continue;
        }
        let got = pipeline(&text, 5);
        assert_eq!(got.answer, text, "{name}");
        assert!(got.reasoning.is_empty() && got.events.is_empty(), "{name}");
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} files without stage syntax");
}

#[test]
fn directives_and_thinking_sample() {
    let text = include_str!("../../../tests/data/directives-and-thinking.md");
    let got = pipeline(text, 4);
    let media = got.media();
    assert_eq!(
        media.iter().map(|m| m.1).collect::<Vec<_>>(),
        [
            "https://files.example.com/charts/sales-week-47.png",
            "https://files.example.com/exports/sales-week-47.csv"
        ]
    );
    assert!(
        got.answer
            .starts_with("Here is last week's sales chart.\n\nSales grew"),
        "{}",
        got.answer
    );
    assert_eq!(
        &got.answer[..media[0].0],
        "Here is last week's sales chart.\n\n"
    );
    assert!(
        got.answer
            .trim_end()
            .ends_with("Summary: strong week, one dip explained by the outage, no action needed.")
    );
    assert!(
        !got.answer.contains('<') && !got.answer.contains("[["),
        "{}",
        got.answer
    );
    assert!(got.reasoning.starts_with("The user wants a chart"));
    assert!(got.reasoning.ends_with("Yes, it is small."));
}

#[test]
fn silent_samples_send_nothing() {
    for name in ["silent-reply.md", "silent-and-heartbeat.md"] {
        let text = std::fs::read_to_string(
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/").to_string() + name,
        )
        .unwrap();
        for piece in [1, 2, usize::MAX] {
            assert_eq!(pipeline(&text, piece).answer, "", "{name}");
        }
    }
}
