//! Tests of the text stages wired together as the engine wires them (tags → directives →
//! tokens), below the engine: over the sample replies, and for allocations.

mod alloc;
mod corpus;
mod long;

/// Byte offsets picked by `picks` in `text`, on char boundaries, sorted: where a stage's
/// property tests cut a text into deltas.
pub(crate) fn cuts_in(text: &str, picks: &[proptest::sample::Index]) -> Vec<usize> {
    let mut cuts: Vec<usize> = picks
        .iter()
        .map(|ix| ix.index(text.len() + 1))
        .filter(|&c| text.is_char_boundary(c))
        .collect();
    cuts.sort_unstable();
    cuts
}
