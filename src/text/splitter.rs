//! The platform splitter for whole texts (SPEC §9). API contract; implementation in progress.

use super::block::Block;
use super::metric::LengthMetric;
use crate::Error;

/// How the splitter chooses its cuts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SplitMode {
    /// Fill each piece up to the limit, cutting at the best break within it.
    #[default]
    Length,
    /// Split at every paragraph break first, then by length within long paragraphs.
    Newline,
}

/// Splitter settings. `limit` is in `metric` units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitConfig {
    /// The platform's text limit; every piece fits it, synthetic fence lines included.
    pub limit: usize,
    /// How lengths are counted.
    pub metric: LengthMetric,
    /// Length or newline mode.
    pub mode: SplitMode,
    /// At most this many lines per piece (Discord: 17), a reopened fence line included.
    pub max_lines: Option<usize>,
}

impl Default for SplitConfig {
    fn default() -> Self {
        SplitConfig {
            limit: 4000,
            metric: LengthMetric::Chars,
            mode: SplitMode::Length,
            max_lines: None,
        }
    }
}

/// Splits whole texts to a platform's limit.
#[derive(Clone, Debug)]
pub struct PlatformSplitter {
    config: SplitConfig,
}

impl PlatformSplitter {
    /// Validates `config`: `limit >= 1`, `max_lines >= 1`.
    pub fn new(config: SplitConfig) -> Result<Self, Error> {
        Ok(PlatformSplitter { config })
    }

    /// The configuration.
    pub fn config(&self) -> &SplitConfig {
        &self.config
    }

    /// Splits `text` into pieces, appended to `out`. Never an empty piece; always progress.
    pub fn split_into(&self, text: &str, out: &mut Vec<Block>) {
        let _ = (text, out);
    }

    /// Splits `text` into a new vector of pieces.
    pub fn split(&self, text: &str) -> Vec<Block> {
        let mut out = Vec::new();
        self.split_into(text, &mut out);
        out
    }
}
