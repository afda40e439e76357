//! The spare read buffer of a [`FrameCodec`](super::framing::FrameCodec): the large block of
//! memory one line was read into, given back when the last piece
//! of that line is dropped and kept for the next large line, which is then read into pages
//! already mapped instead of a fresh mapping (a 16 MiB line in a fresh block costs about 4,100
//! page faults and a `munmap`, docs/performance.md).
//!
//! The rules of a [`SpareBuffer`]:
//! - it keeps at most one block, empty, of more than [`KEEP_BUFFER_BYTES`]; of two blocks that
//!   come back, the larger stays;
//! - a block comes back when the last `Bytes` of its line is dropped (on any thread), and only
//!   if nothing else holds it (a block still shared with lines split off it earlier is freed
//!   when they go, as before);
//! - while a line holds its block, the block is not kept, so no second line is read into it;
//! - how long a block is kept is not decided here (no clock): every return gets a new
//!   generation, and whoever holds the spare drops the block of a generation with
//!   [`SpareBuffer::expire`] (the reader's timer, `transport::lines`); after
//!   [`SpareBuffer::close`] nothing is kept.
//!
//! Pure: no I/O, no clock, no task; a shared slot behind a mutex that is never held across
//! anything but a few assignments (a block is freed outside it).

use bytes::{Bytes, BytesMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::Waker;

/// A read buffer that grew past this size (in bytes, 1 MiB) for one line is given away with
/// that line instead of being kept for the next reads, so a large message does not leave its
/// memory behind (with a [`SpareBuffer`], it comes back to the spare when the line is dropped).
pub const KEEP_BUFFER_BYTES: usize = 1024 * 1024;

/// A handle on one codec's spare slot; clones share it. See the module doc for its rules.
#[derive(Clone, Default)]
pub struct SpareBuffer {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    slot: Mutex<Slot>,
    /// A block is lent or kept: what [`SpareBuffer::is_active`] answers without the lock.
    /// Changed only under the lock, after every change of the slot ([`Shared::sync_active`]).
    active: AtomicBool,
}

#[derive(Default)]
struct Slot {
    /// The kept block: empty, its capacity more than [`KEEP_BUFFER_BYTES`].
    block: Option<Vec<u8>>,
    /// Counts the returns: the generation of the kept block.
    generation: u64,
    /// Lines that hold a block now.
    lent: usize,
    /// Woken when a block comes back (registered by [`SpareBuffer::watch`] while one is lent).
    waker: Option<Waker>,
    /// [`SpareBuffer::close`] was called: nothing is kept any more.
    closed: bool,
}

impl Slot {
    fn is_active(&self) -> bool {
        self.lent > 0 || self.block.is_some()
    }
}

impl Shared {
    /// Sets `active` from `slot` (the lock held): a block kept by any path, a returned line's
    /// or one given back by the codec, makes the slot active, so the reader arms its keep
    /// timer for it.
    fn sync_active(&self, slot: &Slot) {
        self.active.store(slot.is_active(), Ordering::Relaxed);
    }
}

impl std::fmt::Debug for SpareBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let slot = self.slot();
        f.debug_struct("SpareBuffer")
            .field("kept_bytes", &slot.block.as_ref().map(Vec::capacity))
            .field("generation", &slot.generation)
            .field("lent", &slot.lent)
            .finish()
    }
}

impl SpareBuffer {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }

    fn slot(&self) -> MutexGuard<'_, Slot> {
        // Nothing panics while the lock is held, so a poisoned slot is still consistent.
        self.shared
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The kept block (empty, capacity more than [`KEEP_BUFFER_BYTES`]), which is then no longer
    /// kept; `None` when none is. No copy, no new block.
    pub fn take(&self) -> Option<BytesMut> {
        let block = {
            let mut slot = self.slot();
            let block = slot.block.take();
            self.shared.sync_active(&slot);
            block
        };
        // A `Bytes` of a `Vec` shorter than its capacity is unique and becomes a `BytesMut` of
        // that same allocation.
        block.map(|b| BytesMut::from(Bytes::from(b)))
    }

    /// `block[..]` as a line that holds `block`: when its last `Bytes` (slices included) is
    /// dropped, the whole allocation of `block` comes back to this slot (module doc). No copy.
    pub fn lend(&self, block: BytesMut) -> Bytes {
        {
            let mut slot = self.slot();
            slot.lent += 1;
            self.shared.sync_active(&slot);
        }
        Bytes::from_owner(Lent {
            block,
            home: Arc::downgrade(&self.shared),
        })
    }

    /// Gives back a large buffer the codec no longer needs (an over-long or a blank line's, or
    /// a line's under [`KEEP_BUFFER_BYTES`], which was copied out): kept as a returned line's
    /// block would be.
    pub fn put_back(&self, block: BytesMut) {
        put(&self.shared, block, false);
    }

    /// A block is lent to a line or kept: when not, [`Self::watch`] has nothing to report.
    /// Without the lock; exact on the thread that calls [`Self::lend`].
    pub fn is_active(&self) -> bool {
        self.shared.active.load(Ordering::Relaxed)
    }

    /// The generation of the kept block (`None`: none is kept). While a line holds a block,
    /// `waker` (if any) is woken when a block comes back.
    pub fn watch(&self, waker: Option<&Waker>) -> Option<u64> {
        let mut slot = self.slot();
        if let Some(waker) = waker.filter(|_| slot.lent > 0)
            && !slot.waker.as_ref().is_some_and(|w| w.will_wake(waker))
        {
            slot.waker = Some(waker.clone());
        }
        slot.block.as_ref().map(|_| slot.generation)
    }

    /// Drops the kept block if it is still of `generation` (no block came back since);
    /// returns its capacity in bytes, 0 when nothing was dropped.
    pub fn expire(&self, generation: u64) -> usize {
        let block = {
            let mut slot = self.slot();
            if slot.generation != generation {
                return 0;
            }
            let block = slot.block.take();
            self.shared.sync_active(&slot);
            block
        };
        block.map_or(0, |b| b.capacity())
    }

    /// Drops the kept block and keeps none from now on (the end of input); returns the capacity
    /// dropped in bytes.
    pub fn close(&self) -> usize {
        let block = {
            let mut slot = self.slot();
            slot.closed = true;
            slot.waker = None;
            let block = slot.block.take();
            self.shared.sync_active(&slot);
            block
        };
        block.map_or(0, |b| b.capacity())
    }

    /// The address and capacity of the kept block.
    #[cfg(test)]
    pub(crate) fn kept(&self) -> Option<(*const u8, usize)> {
        self.slot()
            .block
            .as_ref()
            .map(|b| (b.as_ptr(), b.capacity()))
    }
}

/// The owner of a lent line's `Bytes`: its block, and the slot it goes back to.
struct Lent {
    block: BytesMut,
    home: Weak<Shared>,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.block
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let block = std::mem::take(&mut self.block);
        if let Some(home) = self.home.upgrade() {
            put(&home, block, true);
        }
    }
}

/// Puts `block` back into `shared`'s slot (module doc), one lent line fewer when `was_lent`;
/// wakes the watcher when a block is kept.
fn put(shared: &Shared, mut block: BytesMut, was_lent: bool) {
    block.clear();
    // An empty `BytesMut` gives its whole allocation back without a copy when nothing else
    // holds it; a block still shared gives a new empty `Vec` (and is freed by its last holder).
    let block = Vec::from(block);
    let (dropped, waker) = {
        let mut slot = shared.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if was_lent {
            slot.lent = slot.lent.saturating_sub(1);
        }
        let dropped = if slot.closed || block.capacity() <= KEEP_BUFFER_BYTES {
            Some(block)
        } else {
            slot.generation += 1;
            match slot.block.take() {
                Some(kept) if kept.capacity() >= block.capacity() => {
                    slot.block = Some(kept);
                    Some(block)
                }
                smaller => {
                    slot.block = Some(block);
                    smaller
                }
            }
        };
        shared.sync_active(&slot);
        let waker = if slot.block.is_some() {
            slot.waker.take()
        } else {
            None
        };
        (dropped, waker)
    };
    drop(dropped);
    if let Some(waker) = waker {
        waker.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn large(fill: u8, len: usize) -> BytesMut {
        let mut b = BytesMut::with_capacity(2 * KEEP_BUFFER_BYTES);
        b.resize(len, fill);
        b
    }

    #[test]
    fn a_lent_block_comes_back_when_its_last_piece_is_dropped() {
        let spare = SpareBuffer::new();
        let block = large(b'a', 1000);
        let (ptr, cap) = (block.as_ptr(), block.capacity());
        let line = spare.lend(block);
        assert_eq!(&line[..], &[b'a'; 1000][..]);
        assert_eq!(line.as_ptr(), ptr, "no copy");
        let piece = line.slice(10..20);
        drop(line);
        assert_eq!(spare.kept(), None, "a piece still holds it");
        assert!(spare.is_active());
        drop(piece);
        assert_eq!(spare.kept(), Some((ptr, cap)));
        assert_eq!(
            spare.take().map(|b| (b.as_ptr(), b.len(), b.capacity())),
            Some((ptr, 0, cap))
        );
        assert_eq!(spare.kept(), None);
        assert!(!spare.is_active());
    }

    #[test]
    fn the_larger_of_two_blocks_stays_and_small_or_shared_ones_are_not_kept() {
        let spare = SpareBuffer::new();
        let small = spare.lend(BytesMut::with_capacity(KEEP_BUFFER_BYTES));
        drop(small);
        assert_eq!(spare.kept(), None, "not more than KEEP_BUFFER_BYTES");
        let a = spare.lend(large(b'a', 1));
        let mut b_block = BytesMut::with_capacity(4 * KEEP_BUFFER_BYTES);
        b_block.resize(1, b'b');
        let b_cap = b_block.capacity();
        let b = spare.lend(b_block);
        drop(b);
        drop(a);
        assert_eq!(spare.kept().map(|k| k.1), Some(b_cap));
        // A block another line still shares is not kept.
        let mut shared = large(b'c', 100);
        let earlier = shared.split_to(10).freeze();
        drop(spare.take());
        drop(spare.lend(shared));
        assert_eq!(spare.kept(), None);
        assert_eq!(&earlier[..], &[b'c'; 10][..]);
    }

    #[test]
    fn expire_drops_only_the_generation_it_names_and_close_keeps_nothing() {
        let spare = SpareBuffer::new();
        assert_eq!(spare.watch(None), None);
        drop(spare.lend(large(b'a', 1)));
        let first = spare.watch(None);
        assert!(first.is_some());
        let block = spare.take();
        assert_eq!(spare.watch(None), None);
        let cap = block.as_ref().map_or(0, BytesMut::capacity);
        drop(spare.lend(block.unwrap_or_default()));
        let second = spare.watch(None);
        assert!(second.is_some() && second != first);
        assert_eq!(
            spare.expire(first.unwrap_or(0)),
            0,
            "a block came back since"
        );
        assert!(spare.kept().is_some());
        assert_eq!(spare.expire(second.unwrap_or(0)), cap);
        assert_eq!(spare.kept(), None);
        assert!(!spare.is_active());
        drop(spare.lend(large(b'a', 1)));
        assert!(spare.close() > KEEP_BUFFER_BYTES);
        drop(spare.lend(large(b'a', 1)));
        assert_eq!(spare.kept(), None, "closed");
    }

    #[test]
    fn a_return_wakes_the_watcher_and_a_dropped_slot_frees_the_block() {
        struct Flag(std::sync::atomic::AtomicUsize);
        impl std::task::Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let flag = Arc::new(Flag(0.into()));
        let waker = Waker::from(flag.clone());
        let spare = SpareBuffer::new();
        let line = spare.lend(large(b'a', 1));
        assert_eq!(spare.watch(Some(&waker)), None);
        let back = std::thread::spawn(move || drop(line));
        assert!(back.join().is_ok());
        assert_eq!(flag.0.load(Ordering::SeqCst), 1);
        assert!(spare.watch(Some(&waker)).is_some());
        // With the slot gone (the codec and its reader dropped), a line frees its block: it
        // holds its home weakly, so the slot is gone at once and the block has nowhere to go.
        let line = spare.lend(large(b'a', 1));
        let home = Arc::downgrade(&spare.shared);
        drop(spare);
        assert!(
            home.upgrade().is_none(),
            "a lent line does not keep the slot alive"
        );
        assert_eq!(line.len(), 1);
        drop(line);
    }
}
