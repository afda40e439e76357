//! The harness itself: the tests and every program they start write into the test process's
//! own folder (`common::test_home`), never into the user's home, state folder or temp folder.

use crate::common;

#[test]
fn the_tests_have_their_own_home_state_and_temp_folders() {
    let root = common::test_home::root().expect("the test process's folder");
    let var = |name: &str| std::env::var_os(name).map(std::path::PathBuf::from);
    assert_eq!(var("HOME"), Some(root.join("home")));
    assert_eq!(var("XDG_STATE_HOME"), Some(root.join("state")));
    assert_eq!(std::env::temp_dir(), root.join("tmp"));
    let scratch = common::scratch_dir("harness");
    assert!(scratch.starts_with(root), "{}", scratch.display());
    let _ = std::fs::remove_dir_all(&scratch);
}
