use super::*;

#[test]
fn a_session_id_is_32_hex_digits_and_new_each_time() {
    let (Some(a), Some(b)) = (session_id(), session_id()) else {
        panic!("random bytes");
    };
    assert_eq!(a.len(), 32);
    assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(a, b);
}

#[test]
fn an_orphaned_id_stays_in_use_until_its_response_and_orphans_are_bounded() {
    let mut routes = Routes::new();
    routes.claimed = true;
    let (stream, _lines) = mpsc::channel(1);
    let waiter = Waiter {
        serial: 0,
        stream,
        progress: None,
    };
    routes.waiting.insert(Id::Int(1), waiter);
    assert!(routes.in_use(&Id::Int(1)));
    assert!(routes.take_waiter(&Id::Int(1)).is_some());
    assert!(!routes.in_use(&Id::Int(1)));
    routes.orphan(Id::Int(2));
    assert!(routes.in_use(&Id::Int(2)));
    // Its response comes: nobody waits for it, and the id is free again.
    assert!(routes.take_waiter(&Id::Int(2)).is_none());
    assert!(!routes.in_use(&Id::Int(2)));
    for n in 0..=SESSION_ORPHAN_MAX_IDS as i64 {
        routes.orphan(Id::Int(100 + n));
    }
    assert_eq!(routes.orphans.len(), SESSION_ORPHAN_MAX_IDS);
    assert!(!routes.in_use(&Id::Int(100)));
    assert!(routes.in_use(&Id::Int(101)));
    assert!(routes.in_use(&Id::Int(100 + SESSION_ORPHAN_MAX_IDS as i64)));
}
