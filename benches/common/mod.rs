//! What several benches share: the corpus texts they are measured on, the way a text is cut
//! into deltas, and criterion settings.

/// A mixed reply (prose, fenced code, lists and tables) for the whole-engine benches.
#[allow(dead_code)] // not every bench uses it
pub(crate) const MIXED_REPLY: &str = concat!(
    include_str!("../../tests/data/prose-paragraphs.md"),
    include_str!("../../tests/data/code-heavy.md"),
    include_str!("../../tests/data/lists-tables.md"),
);

/// `text` cut into deltas of `size` bytes, each moved forward to the next char boundary (a
/// delta is never empty and never splits a char). `usize::MAX` gives the whole text.
#[allow(dead_code)] // not every bench uses it
pub(crate) fn deltas(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = start.saturating_add(size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// Criterion settings for the text-core benches: 20 samples over 2 s each, enough for a
/// stable median on these short iterations without making a full run take minutes.
#[allow(dead_code)] // not every bench uses it
pub(crate) fn short_runs() -> criterion::Criterion {
    criterion::Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2))
}
