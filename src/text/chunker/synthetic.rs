//! The synthetic start of the block being built, its cost, and the limits and planner that
//! count it.

use crate::text::cut::{Planner, Reopen, ReopenCost};
use crate::text::limits::Limits;
use crate::text::markdown::inline::SpanDelims;
use crate::text::markdown::{ContainerPrefix, FenceMarker};

use super::*;

/// The synthetic start of the block being built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ReopenKind {
    /// A fence reopened with its saved opening line, or with its bare marker.
    Fence {
        marker: FenceMarker,
        bare: bool,
        /// The quote prefix follows the line ([`Reopen::Fence`]).
        quoted: bool,
    },
    /// A fence whose opening line was cut: its bare marker, the rest of the line after it.
    Marker(FenceMarker, bool),
    /// An indented code line continued after 4 spaces (after these quote markers and a
    /// space first, in a quote: see [`Reopen::Indent`]).
    Indent(ContainerPrefix),
    /// A table's header and delimiter rows (saved in `reopen_table`) repeated.
    Table,
    /// Inline delimiters (a code span's backtick run, emphasis) open again.
    Delims(SpanDelims),
}

impl BlockChunker {
    pub(super) fn limits(&self) -> Limits {
        Limits {
            metric: self.config.metric,
            max: self.config.max,
            max_lines: None,
        }
    }

    pub(super) fn current_reopen(&self) -> Option<Reopen<'_>> {
        self.reopen.map(|kind| match kind {
            ReopenKind::Fence {
                marker,
                bare,
                quoted,
            } => Reopen::Fence {
                marker,
                line: (!bare).then_some(self.reopen_line.as_str()),
                quoted,
            },
            ReopenKind::Marker(marker, space) => Reopen::Marker { marker, space },
            ReopenKind::Indent(quote) => Reopen::Indent { quote },
            ReopenKind::Table => Reopen::Table {
                head: &self.reopen_table,
                blank: 0,
            },
            ReopenKind::Delims(d) => Reopen::Delims(d),
        })
    }

    pub(super) fn reopen_cost(&self) -> ReopenCost {
        self.reopen_cost
    }

    /// Sets the synthetic start of the block being built, computing its cost.
    pub(super) fn set_reopen(&mut self, kind: ReopenKind) {
        self.reopen = Some(kind);
        self.reopen_cost = ReopenCost::of(self.current_reopen(), self.config.metric);
    }

    /// The block being built has no synthetic start.
    pub(super) fn clear_reopen(&mut self) {
        self.reopen = None;
        self.reopen_cost = ReopenCost::default();
    }

    /// Units of the block so far, its synthetic start included.
    pub(super) fn display_units(&self) -> usize {
        self.reopen_cost().units + self.units - self.start_units
    }

    /// Whether a fence open at the end of the text can be closed within the limits.
    pub(super) fn closable(&self) -> bool {
        match self.scanner.open_fence() {
            Some(f) => self.planner(self.buffer.len(), true).repair(f).is_some(),
            None => false,
        }
    }

    /// The planner over the text through moment `t`; `complete` at a flush.
    pub(super) fn planner(&self, t: usize, complete: bool) -> Planner<'_> {
        Planner {
            text: &self.buffer[..t],
            scanner: &self.scanner,
            limits: self.limits(),
            order: self.forced,
            complete,
            continued_line: Some(&self.reopen_line),
            continued_table: Some(&self.reopen_table),
            breaks_only: false,
        }
    }
}
