//! The bytes of a long name's prefixes for a lookup that probes them longest
//! first (the FIB's, the strategy table's). `Name::prefix_value` finds where a
//! prefix past the name's offset table ends by walking the name's headers, so a
//! lookup probing many such lengths walked the name once per probe, quadratic
//! in a name of thousands of components; this walks it once.

use std::cell::OnceCell;

use trajan_wire::Name;

/// A name's prefixes, those past `past` components found from one walk of the
/// name, made at the first probe past `past` and as far as it (the longest: the
/// probes come longest first), so a lookup that probes only short prefixes walks
/// nothing. It allocates: for the cold paths of names too long for the tables'
/// inline arrays.
pub(crate) struct PrefixWalk<'n> {
    name: &'n Name,
    past: usize,
    ends: OnceCell<Vec<usize>>,
}

impl<'n> PrefixWalk<'n> {
    /// Prefixes of `name`, walked once for those of more than `past` components.
    pub(crate) fn new(name: &'n Name, past: usize) -> Self {
        PrefixWalk { name, past, ends: OnceCell::new() }
    }

    /// The encoded first `j` components (1 ≤ `j` ≤ the name's length).
    pub(crate) fn prefix(&self, j: usize) -> &'n [u8] {
        if j > self.past && self.ends.get().is_none() {
            #[cfg(test)]
            walked(j);
            let _ = self.ends.set(self.name.prefix_ends(j).collect());
        }
        match self.ends.get().and_then(|ends| ends.get(j - 1)) {
            Some(&end) => &self.name.value()[..end],
            None => {
                #[cfg(test)]
                walked(j);
                self.name.prefix_value(j)
            }
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Components this thread's lookups walked past a name's offset table to
    /// find the bytes of the prefixes they probed.
    pub(crate) static WALKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts a walk of a name's components up to its `j`th, past its offset
/// table: `Name::prefix_value(j)` for a probe, or where the prefixes end.
#[cfg(test)]
pub(crate) fn walked(j: usize) {
    WALKED.with(|w| w.set(w.get() + j.saturating_sub(trajan_wire::name::INLINE_COMPONENTS)));
}
