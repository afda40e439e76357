//! The part of a client's input that an error message repeats: bounded, so that a 5 MB path
//! or id does not come back whole in every error.

/// The most bytes of one input an error repeats; the rest is counted, not shown.
pub const MAX_ECHOED_INPUT_BYTES: usize = 256;

/// `input` for an error message, quoted (`{:?}`): whole when it is at most
/// [`MAX_ECHOED_INPUT_BYTES`], else its first bytes (cut at a character boundary) and how
/// long it is.
pub fn echoed(input: &str) -> String {
    if input.len() <= MAX_ECHOED_INPUT_BYTES {
        return format!("{input:?}");
    }
    let mut cut = MAX_ECHOED_INPUT_BYTES;
    while !input.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{:?}... ({} bytes)", &input[..cut], input.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_input_is_cut_at_a_character_boundary_and_counted() {
        assert_eq!(echoed("s1"), "\"s1\"");
        let long = format!(
            "{}é{}",
            "a".repeat(MAX_ECHOED_INPUT_BYTES - 1),
            "b".repeat(10)
        );
        assert_eq!(
            echoed(&long),
            format!(
                "{:?}... (267 bytes)",
                "a".repeat(MAX_ECHOED_INPUT_BYTES - 1)
            )
        );
    }

    #[test]
    fn an_input_of_the_bound_comes_back_whole_and_one_byte_more_is_cut() {
        let at_bound = "a".repeat(MAX_ECHOED_INPUT_BYTES);
        assert_eq!(echoed(&at_bound), format!("{at_bound:?}"));
        let over = "a".repeat(MAX_ECHOED_INPUT_BYTES + 1);
        assert_eq!(
            echoed(&over),
            format!("{at_bound:?}... ({} bytes)", MAX_ECHOED_INPUT_BYTES + 1)
        );
    }
}
