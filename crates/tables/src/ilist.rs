//! Doubly linked lists threaded through slab entries by index. They give O(1)
//! unlink of any entry, which the content store's LRU order and the timer wheel's
//! slots need; nothing ever searches along one of these lists.

use crate::slab::Slab;

/// The index that ends a list.
pub(crate) const NIL: u32 = u32::MAX;

/// The two links an entry needs to be on one list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Links {
    prev: u32,
    next: u32,
}

impl Links {
    /// Translates the links through `map` after the slab moved its entries
    /// ([`Slab::compact`]).
    pub fn remap(&mut self, map: &[u32]) {
        for link in [&mut self.prev, &mut self.next] {
            if *link != NIL {
                *link = map[*link as usize];
            }
        }
    }
}

impl Default for Links {
    fn default() -> Self {
        Links { prev: NIL, next: NIL }
    }
}

/// An entry type that embeds [`Links`].
pub(crate) trait Linked {
    fn links(&self) -> &Links;
    fn links_mut(&mut self) -> &mut Links;
}

/// A list's ends. The list does not own its entries: they stay in the slab, and the
/// table removes an entry from its list before removing it from the slab.
#[derive(Clone, Copy, Debug)]
pub(crate) struct List {
    head: u32,
    tail: u32,
}

impl Default for List {
    fn default() -> Self {
        List { head: NIL, tail: NIL }
    }
}

impl List {
    /// Translates the list's ends through `map` after the slab moved its
    /// entries ([`Slab::compact`]); each entry's [`Links`] too.
    pub fn remap(&mut self, map: &[u32]) {
        let mut ends = Links { prev: self.head, next: self.tail };
        ends.remap(map);
        (self.head, self.tail) = (ends.prev, ends.next);
    }

    /// Whether the list holds no entry, read from its head alone, so a caller
    /// can skip an empty list without walking it.
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// The first entry, if any.
    pub fn head(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    /// The last entry, if any.
    pub fn tail(&self) -> Option<u32> {
        (self.tail != NIL).then_some(self.tail)
    }

    /// The entry after `idx` (towards the tail), for walks along the list.
    pub fn next<T: Linked>(&self, slab: &Slab<T>, idx: u32) -> Option<u32> {
        let next = slab.at(idx).links().next;
        (next != NIL).then_some(next)
    }

    /// The entry before `idx` (towards the head).
    pub fn prev<T: Linked>(&self, slab: &Slab<T>, idx: u32) -> Option<u32> {
        let prev = slab.at(idx).links().prev;
        (prev != NIL).then_some(prev)
    }

    /// Links entry `idx`, which must be on no list, at the front.
    pub fn push_front<T: Linked>(&mut self, slab: &mut Slab<T>, idx: u32) {
        let old = self.head;
        *slab.at_mut(idx).links_mut() = Links { prev: NIL, next: old };
        if old == NIL {
            self.tail = idx;
        } else {
            slab.at_mut(old).links_mut().prev = idx;
        }
        self.head = idx;
    }

    /// Moves the last entry to the front (a full cache reusing its least
    /// recently used slot): [`List::unlink`] then [`List::push_front`] of the
    /// tail, with the slab read and written a third less.
    pub fn rotate_tail<T: Linked>(&mut self, slab: &mut Slab<T>) {
        let (tail, head) = (self.tail, self.head);
        if tail == head {
            return;
        }
        let prev = slab.at(tail).links().prev;
        slab.at_mut(prev).links_mut().next = NIL;
        *slab.at_mut(tail).links_mut() = Links { prev: NIL, next: head };
        slab.at_mut(head).links_mut().prev = tail;
        (self.head, self.tail) = (tail, prev);
    }

    /// Unlinks entry `idx`, which must be on this list.
    pub fn unlink<T: Linked>(&mut self, slab: &mut Slab<T>, idx: u32) {
        let Links { prev, next } = *slab.at(idx).links();
        if prev == NIL {
            self.head = next;
        } else {
            slab.at_mut(prev).links_mut().next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            slab.at_mut(next).links_mut().prev = prev;
        }
        *slab.at_mut(idx).links_mut() = Links::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Node(u32, Links);
    impl Linked for Node {
        fn links(&self) -> &Links {
            &self.1
        }
        fn links_mut(&mut self) -> &mut Links {
            &mut self.1
        }
    }

    fn walk(list: &List, slab: &Slab<Node>) -> Vec<u32> {
        let mut out = Vec::new();
        let mut i = list.head();
        while let Some(at) = i {
            out.push(slab.at(at).0);
            i = list.next(slab, at);
        }
        let mut back = Vec::new();
        let mut i = list.tail;
        while i != NIL {
            back.push(slab.at(i).0);
            i = slab.at(i).links().prev;
        }
        back.reverse();
        assert_eq!(out, back, "forward and backward links agree");
        out
    }

    #[test]
    fn the_tail_rotates_to_the_front() {
        let mut slab = Slab::new();
        let mut list = List::default();
        list.rotate_tail(&mut slab);
        assert!(list.is_empty(), "an empty list stays empty");
        let ids: Vec<u32> = (0..3).map(|v| slab.insert(Node(v, Links::default())).idx).collect();
        list.push_front(&mut slab, ids[0]);
        list.rotate_tail(&mut slab);
        assert_eq!(walk(&list, &slab), [0], "one entry is its own tail");
        list.push_front(&mut slab, ids[1]);
        list.rotate_tail(&mut slab);
        assert_eq!(walk(&list, &slab), [0, 1]);
        list.push_front(&mut slab, ids[2]);
        list.rotate_tail(&mut slab);
        assert_eq!(walk(&list, &slab), [1, 2, 0]);
        list.rotate_tail(&mut slab);
        assert_eq!(walk(&list, &slab), [0, 1, 2]);
    }

    #[test]
    fn push_and_unlink_anywhere() {
        let mut slab = Slab::new();
        let mut list = List::default();
        let ids: Vec<u32> = (0..4).map(|v| slab.insert(Node(v, Links::default())).idx).collect();
        for &i in &ids {
            list.push_front(&mut slab, i);
        }
        assert_eq!(walk(&list, &slab), [3, 2, 1, 0]);
        list.unlink(&mut slab, ids[2]);
        assert_eq!(walk(&list, &slab), [3, 1, 0]);
        list.unlink(&mut slab, ids[3]);
        assert_eq!(walk(&list, &slab), [1, 0]);
        list.unlink(&mut slab, ids[0]);
        assert_eq!(walk(&list, &slab), [1]);
        assert_eq!((list.head(), list.tail()), (Some(ids[1]), Some(ids[1])));
        list.unlink(&mut slab, ids[1]);
        assert!(list.is_empty());
        assert_eq!(list.tail(), None);
        list.push_front(&mut slab, ids[2]);
        assert_eq!(walk(&list, &slab), [2]);
    }
}
