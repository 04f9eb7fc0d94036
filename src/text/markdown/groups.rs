//! Sixteen bytes tested at once for a few given values: the inner step of the scanner's and
//! the inline reader's byte searches, where the next stop is usually a dozen bytes away (too
//! close for a vector search's set-up to pay).

/// The index of the first byte of `group` that equals one of `needles`, if any.
///
/// Written (without `unsafe`) so that the compiler makes it a few vector compares (SSE2, in
/// every x86-64) and, for the usual answer (none), one mask move and a branch: the test
/// ORs the sixteen compare results together, which it lowers to that; the index, needed
/// once per search, is read from them as a 128-bit little-endian mask.
#[inline(always)]
pub(super) fn first_of<const N: usize>(group: &[u8; 16], needles: [u8; N]) -> Option<usize> {
    let mut hits = [0u8; 16];
    for (h, &b) in hits.iter_mut().zip(group) {
        let mut hit = 0;
        for n in needles {
            hit |= u8::from(b == n);
        }
        *h = hit.wrapping_neg();
    }
    if hits.iter().fold(0, |any, &h| any | h) == 0 {
        return None;
    }
    Some(u128::from_le_bytes(hits).trailing_zeros() as usize / 8)
}

/// Row `k`: `0xFF` at the indices from `k` on, `0` before (what [`first_of_from`] keeps).
static FROM: [[u8; 16]; 16] = {
    let mut rows = [[0u8; 16]; 16];
    let mut k = 0;
    while k < 16 {
        let mut i = k;
        while i < 16 {
            rows[k][i] = 0xFF;
            i += 1;
        }
        k += 1;
    }
    rows
};

/// [`first_of`] among the bytes of `group` from index `from` (below 16) on: a group read
/// back from the end of a text, whose first bytes were looked at already. The bytes before
/// `from` are masked out with one more vector AND.
#[inline(always)]
pub(super) fn first_of_from<const N: usize>(
    group: &[u8; 16],
    needles: [u8; N],
    from: usize,
) -> Option<usize> {
    first_of_high(group, needles, false, from)
}

/// The first byte of `bytes[from..to]` that equals one of `needles`, or is not ASCII when
/// `high`, as an index into `bytes`: sixteen bytes per branch (see [`first_of`]), and
/// fewer than sixteen left as the group that ends at `to`, read back (see
/// [`first_of_from`]), so that a short search has no loop exit to mispredict. Only a text
/// shorter than a group is walked byte by byte.
#[inline(always)]
pub(crate) fn find_in<const N: usize>(
    bytes: &[u8],
    from: usize,
    to: usize,
    needles: [u8; N],
    high: bool,
) -> Option<usize> {
    let hit = |b: u8| (high && b >= 0x80) || needles.contains(&b);
    let mut base = from;
    while let Some(g) = bytes[..to].get(base..base + 16) {
        if let Some(k) = first_of_high(g.try_into().expect("16 bytes"), needles, high, 0) {
            return Some(base + k);
        }
        base += 16;
    }
    if base >= to {
        return None;
    }
    match to.checked_sub(16) {
        Some(back) => first_of_high(
            bytes[back..to].try_into().expect("16 bytes"),
            needles,
            high,
            base - back,
        )
        .map(|k| back + k),
        None => bytes[base..to]
            .iter()
            .position(|&b| hit(b))
            .map(|k| base + k),
    }
}

/// [`first_of_from`], also finding the bytes that are not ASCII when `high`.
#[inline(always)]
fn first_of_high<const N: usize>(
    group: &[u8; 16],
    needles: [u8; N],
    high: bool,
    from: usize,
) -> Option<usize> {
    let mut hits = [0u8; 16];
    for ((h, &b), &keep) in hits.iter_mut().zip(group).zip(&FROM[from]) {
        let mut hit = if high { b >> 7 } else { 0 };
        for n in needles {
            hit |= u8::from(b == n);
        }
        *h = hit.wrapping_neg() & keep;
    }
    if hits.iter().fold(0, |any, &h| any | h) == 0 {
        return None;
    }
    Some(u128::from_le_bytes(hits).trailing_zeros() as usize / 8)
}

#[cfg(test)]
mod tests {
    use super::{find_in, first_of, first_of_from};

    /// Every start index: the first needle at or after it, against a walk byte by byte.
    #[test]
    fn finds_the_first_needle_from_an_index() {
        let needles = [b'`', b'\n', b'|'];
        let mut rng = fastrand::Rng::with_seed(11);
        for _ in 0..4000 {
            let mut group = [0u8; 16];
            for b in &mut group {
                *b = match rng.u8(0..6) {
                    0 => needles[rng.usize(0..3)],
                    1 => rng.u8(..),
                    _ => b'a',
                };
            }
            for from in 0..16 {
                let want = group[from..]
                    .iter()
                    .position(|b| needles.contains(b))
                    .map(|k| from + k);
                assert_eq!(
                    first_of_from(&group, needles, from),
                    want,
                    "{group:?} {from}"
                );
            }
        }
    }

    /// Every range of random texts, with and without the non-ASCII bytes, against a walk
    /// byte by byte: needles (and non-ASCII bytes) before the range's start and after its
    /// end are not found.
    #[test]
    fn finds_the_first_needle_in_a_range() {
        let needles = [b'`', b'\n', b'|'];
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..300 {
            let len = rng.usize(0..60);
            let text: Vec<u8> = (0..len)
                .map(|_| match rng.u8(0..8) {
                    0 => needles[rng.usize(0..3)],
                    1 => rng.u8(0x80..),
                    2 => rng.u8(..),
                    _ => b'a',
                })
                .collect();
            for high in [false, true] {
                for from in 0..=len {
                    for to in from..=len {
                        let want = text[from..to]
                            .iter()
                            .position(|&b| needles.contains(&b) || (high && b >= 0x80))
                            .map(|k| from + k);
                        let found = find_in(&text, from, to, needles, high);
                        assert_eq!(found, want, "{text:?} {from}..{to} {high}");
                    }
                }
            }
        }
    }

    /// Every position and every needle, against a walk byte by byte.
    #[test]
    fn finds_the_first_needle() {
        let needles = [b'`', b'\n', b'|'];
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..4000 {
            let mut group = [0u8; 16];
            for b in &mut group {
                *b = match rng.u8(0..8) {
                    0 => needles[rng.usize(0..3)],
                    1 => rng.u8(..),
                    2 => 0xFF,
                    _ => b'a',
                };
            }
            let want = group.iter().position(|b| needles.contains(b));
            assert_eq!(first_of(&group, needles), want, "{group:?}");
        }
        assert_eq!(first_of(&[b'|'; 16], needles), Some(0));
        assert_eq!(first_of(&[0x80; 16], needles), None);
        let mut last = [b'a'; 16];
        last[15] = b'\n';
        assert_eq!(first_of(&last, needles), Some(15));
    }
}
