//! The pause between block sends that makes a reply read as if typed (SPEC §7).

/// How long the dispatcher waits between two block sends. Never before the first block,
/// never for tool or final sends; that policy belongs to the dispatcher, this type only
/// draws the number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HumanDelay {
    /// No pause (the default).
    #[default]
    Off,
    /// A uniform random pause in [800, 2500] ms, both ends included.
    Natural,
    /// A uniform random pause in [`min_ms`, `max_ms`], both ends included; exactly `min_ms`
    /// when `max_ms <= min_ms`.
    Custom {
        /// The shortest pause, in ms.
        min_ms: u64,
        /// The longest pause, in ms.
        max_ms: u64,
    },
}

impl HumanDelay {
    /// The shortest pause of [`HumanDelay::Natural`], in ms.
    pub const NATURAL_MIN_MS: u64 = 800;
    /// The longest pause of [`HumanDelay::Natural`], in ms.
    pub const NATURAL_MAX_MS: u64 = 2500;
    /// The largest value a [`HumanDelay::Custom`] bound may have (one minute): a longer pause
    /// between two parts of one reply is taken for a configuration mistake.
    pub const CUSTOM_LIMIT_MS: u64 = 60_000;

    /// Draws the next pause in ms from `rng`. [`HumanDelay::Off`] and a custom range with
    /// `max_ms <= min_ms` draw nothing, so they leave the generator's sequence untouched.
    pub fn sample(self, rng: &mut fastrand::Rng) -> u64 {
        match self {
            HumanDelay::Off => 0,
            HumanDelay::Natural => rng.u64(Self::NATURAL_MIN_MS..=Self::NATURAL_MAX_MS),
            HumanDelay::Custom { min_ms, max_ms } if max_ms <= min_ms => min_ms,
            HumanDelay::Custom { min_ms, max_ms } => rng.u64(min_ms..=max_ms),
        }
    }

    /// The mode's name as the CLI and the C ABI spell it: `off`, `natural`, `custom`.
    pub fn name(self) -> &'static str {
        match self {
            HumanDelay::Off => "off",
            HumanDelay::Natural => "natural",
            HumanDelay::Custom { .. } => "custom",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_is_zero() {
        let mut rng = fastrand::Rng::with_seed(1);
        assert_eq!(HumanDelay::Off.sample(&mut rng), 0);
        assert_eq!(HumanDelay::default(), HumanDelay::Off);
    }

    #[test]
    fn natural_stays_in_range_and_reaches_both_ends() {
        let mut rng = fastrand::Rng::with_seed(7);
        let (mut low, mut high) = (false, false);
        for _ in 0..200_000 {
            let d = HumanDelay::Natural.sample(&mut rng);
            assert!((800..=2500).contains(&d), "{d}");
            low |= d == 800;
            high |= d == 2500;
        }
        assert!(low && high);
    }

    #[test]
    fn custom_range_and_inverted_range() {
        let mut rng = fastrand::Rng::with_seed(3);
        let inverted = HumanDelay::Custom {
            min_ms: 1200,
            max_ms: 400,
        };
        let equal = HumanDelay::Custom {
            min_ms: 500,
            max_ms: 500,
        };
        for _ in 0..1000 {
            assert_eq!(inverted.sample(&mut rng), 1200);
            assert_eq!(equal.sample(&mut rng), 500);
        }
        let range = HumanDelay::Custom {
            min_ms: 10,
            max_ms: 12,
        };
        let mut seen = [false; 3];
        for _ in 0..1000 {
            let d = range.sample(&mut rng);
            assert!((10..=12).contains(&d));
            seen[(d - 10) as usize] = true;
        }
        assert_eq!(seen, [true; 3]);
    }

    #[test]
    fn same_seed_same_sequence() {
        let draw = |seed| {
            let mut rng = fastrand::Rng::with_seed(seed);
            (0..50)
                .map(|_| HumanDelay::Natural.sample(&mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(42), draw(42));
        assert_ne!(draw(42), draw(43));
    }
}
