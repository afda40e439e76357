//! The registry of a process's child process groups: every child that [`super::child::spawn`]
//! starts joins the registry it is given, and leaves it once it is reaped and its handle is
//! gone (after its stop steps, whose last one is SIGKILL to its group). The application
//! creates one registry per process and hands it to every bridge, session and adapter that
//! starts a child, so that the paths that must end the process at once (a panic, the watchdog,
//! a second termination signal) reach every live group, however many bridges and children the
//! process runs.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

/// The process groups of the live children of a process (each child leads its own group: its
/// pid is the group's id).
#[derive(Debug, Default)]
pub struct ChildRegistry {
    groups: Mutex<BTreeSet<libc::pid_t>>,
}

/// One child's place in a [`ChildRegistry`]: the group leaves the registry when the last
/// holder drops it (the child's handle and the task that reaps it).
#[derive(Debug)]
pub struct Membership {
    registry: Arc<ChildRegistry>,
    pgid: libc::pid_t,
}

impl ChildRegistry {
    /// An empty registry.
    pub fn new() -> Arc<Self> {
        Arc::new(ChildRegistry::default())
    }

    /// Registers the group `pgid` (a child that was just started); it leaves when every clone
    /// of the returned membership is dropped.
    pub(crate) fn join(self: &Arc<Self>, pgid: libc::pid_t) -> Arc<Membership> {
        self.lock().insert(pgid);
        Arc::new(Membership {
            registry: self.clone(),
            pgid,
        })
    }

    /// The registered groups, lowest first.
    pub(crate) fn groups(&self) -> Vec<libc::pid_t> {
        self.lock().iter().copied().collect()
    }

    /// Whether `pid` leads a registered group (a child whose status its own task collects).
    pub(crate) fn contains(&self, pid: libc::pid_t) -> bool {
        self.lock().contains(&pid)
    }

    /// Sends SIGKILL to every registered group (the process ends at once: a panic, the
    /// watchdog, a second signal). A group that is gone already is skipped.
    pub fn kill_all(&self) {
        for pgid in self.groups() {
            if pgid > 0 {
                // SAFETY: kill(2) with a negative pid signals a process group; no memory is
                // shared.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
            }
        }
    }

    /// The set, also after a panic of a thread that held it: no code panics while it holds
    /// the lock (an insert or a removal), so the set is whole, and the panic hook must reach it.
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<libc::pid_t>> {
        self.groups.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.pgid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_leaves_when_its_last_membership_is_dropped() {
        let registry = ChildRegistry::new();
        let a = registry.join(41);
        let b = registry.join(7);
        let a_reaper = a.clone();
        assert_eq!(registry.groups(), vec![7, 41]);
        drop(a);
        assert!(registry.contains(41));
        drop(a_reaper);
        assert_eq!(registry.groups(), vec![7]);
        assert!(!registry.contains(41));
        drop(b);
        assert!(registry.groups().is_empty());
    }
}
