use super::*;
use serde_json::json;

fn frames_with(mut codec: FrameCodec, input: &[u8], chunks: &[usize]) -> Vec<Frame> {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut rest = input;
    let mut i = 0;
    while !rest.is_empty() {
        let n = chunks[i % chunks.len()].max(1).min(rest.len());
        buf.extend_from_slice(&rest[..n]);
        while let Ok(Some(f)) = codec.decode(&mut buf) {
            out.push(f);
        }
        rest = &rest[n..];
        i += 1;
    }
    while let Ok(Some(f)) = codec.decode_eof(&mut buf) {
        out.push(f);
    }
    out
}

fn frames_of(input: &[u8], max: usize, chunks: &[usize]) -> Vec<Frame> {
    frames_with(FrameCodec::new(max), input, chunks)
}

fn line(bytes: &[u8]) -> Frame {
    Frame::Line(Bytes::copy_from_slice(bytes))
}

/// A small deterministic generator (xorshift64*) for chunk sizes.
fn chunk_sizes(seed: u64, n: usize, max: usize) -> Vec<usize> {
    let mut x = seed.max(1);
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % max as u64) as usize + 1
        })
        .collect()
}

#[test]
fn any_byte_boundaries_give_the_same_frames() {
    let long = format!("{{\"id\":1,\"x\":\"{}\",\"id\":2}}", "y".repeat(2000));
    let input = format!("a\r\n\n{{\"b\":1}}\n{long}\nlast");
    let want = frames_of(input.as_bytes(), 1000, &[input.len()]);
    assert_eq!(want.len(), 4);
    assert_eq!(want[0], line(b"a"));
    assert_eq!(want[1], line(b"{\"b\":1}"));
    assert_eq!(want[3], line(b"last"));
    let Frame::TooLong {
        len_bytes,
        head,
        id,
    } = &want[2]
    else {
        panic!("expected TooLong, got {:?}", want[2]);
    };
    assert_eq!(*len_bytes, long.len());
    assert_eq!(head.as_slice(), &long.as_bytes()[..256]);
    // The parser keeps the last of two "id" members, so the recovery does too.
    assert_eq!(*id, Some(Id::Int(2)));
    assert_eq!(
        frames_of(input.as_bytes(), 1000, &[1]),
        want,
        "one byte at a time"
    );
    for seed in 1..50 {
        let sizes = chunk_sizes(seed, 64, 700);
        assert_eq!(
            frames_of(input.as_bytes(), 1000, &sizes),
            want,
            "seed {seed}"
        );
    }
}

#[test]
fn a_line_of_exactly_the_limit_passes() {
    let out = frames_of(b"12345\n123456\n", 5, &[3]);
    assert_eq!(out[0], line(b"12345"));
    assert!(matches!(out[1], Frame::TooLong { len_bytes: 6, .. }));
    assert_eq!(out.len(), 2);
}

/// The table of the line rules: input, limit, frames (in both modes where they differ).
#[test]
fn line_rules_table() {
    let too_long = |len_bytes: usize, head: &[u8], id: Option<Id>| Frame::TooLong {
        len_bytes,
        head: head.to_vec(),
        id,
    };
    let cases: Vec<(&str, &[u8], usize, Vec<Frame>)> = vec![
        ("empty input", b"", 10, vec![]),
        ("LF", b"a\nb\n", 10, vec![line(b"a"), line(b"b")]),
        ("CRLF", b"a\r\nb\r\n", 10, vec![line(b"a"), line(b"b")]),
        ("only one CR goes", b"a\r\r\n", 10, vec![line(b"a\r")]),
        ("a CR inside stays", b"a\rb\n", 10, vec![line(b"a\rb")]),
        (
            "blank lines skipped",
            b"\n\r\n \t\n\x0c\na\n",
            10,
            vec![line(b"a")],
        ),
        (
            "last line without LF",
            b"a\nb",
            10,
            vec![line(b"a"), line(b"b")],
        ),
        ("last line CR without LF", b"b\r", 10, vec![line(b"b")]),
        ("last blank line", b"a\n  ", 10, vec![line(b"a")]),
        (
            "the CR of a CRLF does not count toward the limit",
            b"12345\r\n1234\r\n",
            5,
            vec![line(b"12345"), line(b"1234")],
        ),
        (
            "nor does a CR at the end of input",
            b"12345\r",
            5,
            vec![line(b"12345")],
        ),
        (
            "a CRLF line one byte over the limit",
            b"123456\r\nok\r\n",
            5,
            vec![too_long(6, b"123456\r", None), line(b"ok")],
        ),
        (
            "a CR over the limit that no LF follows",
            b"12345\rx\nok\n",
            5,
            vec![too_long(7, b"12345\rx", None), line(b"ok")],
        ),
        (
            "a CR inside counts",
            b"12\r45\r\n",
            5,
            vec![line(b"12\r45")],
        ),
        (
            "discarding ends at the newline",
            b"{\"id\":7,\"x\":1}\nok\n",
            5,
            vec![
                too_long(14, b"{\"id\":7,\"x\":1}", Some(Id::Int(7))),
                line(b"ok"),
            ],
        ),
        (
            "an over-long last line without LF",
            b"ok\n{\"id\":\"s\"}",
            5,
            vec![
                line(b"ok"),
                too_long(10, b"{\"id\":\"s\"}", Some(Id::Str("s".into()))),
            ],
        ),
        (
            "two over-long lines in a row",
            b"123456\n1234567\n",
            5,
            vec![too_long(6, b"123456", None), too_long(7, b"1234567", None)],
        ),
        (
            "a byte order mark at the start of the stream is dropped",
            b"\xEF\xBB\xBF{}\n{}\n",
            10,
            vec![line(b"{}"), line(b"{}")],
        ),
        (
            "and does not count toward the limit",
            b"\xEF\xBB\xBF12345\n",
            5,
            vec![line(b"12345")],
        ),
        (
            "a second one stays",
            b"\xEF\xBB\xBF\xEF\xBB\xBF{}\n",
            10,
            vec![line(b"\xEF\xBB\xBF{}")],
        ),
        (
            "one at the start of a later line stays",
            b"a\n\xEF\xBB\xBF{}\n",
            10,
            vec![line(b"a"), line(b"\xEF\xBB\xBF{}")],
        ),
        (
            "one after a blank first line stays",
            b"\n\xEF\xBB\xBF{}\n",
            10,
            vec![line(b"\xEF\xBB\xBF{}")],
        ),
        (
            "a cut mark at the end of input stays",
            b"\xEF\xBB",
            10,
            vec![line(b"\xEF\xBB")],
        ),
        (
            "a mark alone is a blank stream",
            b"\xEF\xBB\xBF\n",
            10,
            vec![],
        ),
    ];
    for (name, input, max, want) in cases {
        for chunks in [&[input.len().max(1)][..], &[1], &[2, 3], &[6, 1], &[5, 2]] {
            assert_eq!(
                frames_of(input, max, chunks),
                want,
                "{name}, reads {chunks:?}"
            );
        }
    }
}

#[test]
fn the_head_of_an_over_long_line_is_its_first_bytes() {
    let long: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let mut input = long.clone();
    input.push(b'\n');
    for chunks in [&[5001][..], &[1], &[100, 7]] {
        let out = frames_of(&input, 1000, chunks);
        assert_eq!(
            out,
            vec![Frame::TooLong {
                len_bytes: 5000,
                head: long[..TOO_LONG_HEAD_BYTES].to_vec(),
                id: None,
            }]
        );
    }
}

#[test]
fn text_mode_keeps_a_byte_order_mark() {
    let out = frames_with(FrameCodec::text(10), b"\xEF\xBB\xBFa\n", &[1]);
    assert_eq!(out, vec![line(b"\xEF\xBB\xBFa")]);
}

#[test]
fn text_mode_keeps_blank_lines_and_looks_for_no_id() {
    let input = b"one\n\n  \r\n{\"id\":1,\"pad\":\"xxxxxxxx\"}\nlast";
    let out = frames_with(FrameCodec::text(10), input, &[3]);
    assert_eq!(
        out,
        vec![
            line(b"one"),
            line(b""),
            line(b"  "),
            Frame::TooLong {
                len_bytes: 25,
                head: b"{\"id\":1,\"pad\":\"xxxxxxxx\"}".to_vec(),
                id: None,
            },
            line(b"last"),
        ]
    );
}

#[test]
fn a_line_is_split_off_the_read_buffer_and_room_is_left_for_a_read() {
    let mut codec = FrameCodec::new(1 << 20);
    let mut buf = BytesMut::with_capacity(READ_CHUNK_BYTES);
    buf.extend_from_slice(b"{\"a\":1}\n{\"b\"");
    let start = buf.as_ptr();
    let Ok(Some(Frame::Line(first))) = codec.decode(&mut buf) else {
        panic!("expected a line");
    };
    assert_eq!(first.as_ptr(), start, "no copy");
    assert_eq!(&first[..], b"{\"a\":1}");
    assert!(matches!(codec.decode(&mut buf), Ok(None)));
    assert_eq!(&buf[..], b"{\"b\"");
    assert!(buf.capacity() - buf.len() >= READ_CHUNK_BYTES / 4);
}

#[test]
fn a_large_line_takes_its_buffer_with_it() {
    let mut codec = FrameCodec::new(64 << 20);
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&vec![b'x'; 2 * KEEP_BUFFER_BYTES]);
    buf.extend_from_slice(b"\nnext");
    let Ok(Some(Frame::Line(big))) = codec.decode(&mut buf) else {
        panic!("expected a line");
    };
    assert_eq!(big.len(), 2 * KEEP_BUFFER_BYTES);
    assert_eq!(&buf[..], b"next");
    assert!(buf.capacity() <= READ_CHUNK_BYTES + 4);
    // Discarding does not keep a large buffer either.
    let mut codec = FrameCodec::new(1000);
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&vec![b'x'; 2 * KEEP_BUFFER_BYTES]);
    assert!(matches!(codec.decode(&mut buf), Ok(None)));
    assert!(buf.is_empty());
    assert!(buf.capacity() <= 2 * READ_CHUNK_BYTES);
}

/// Reads `input` as `FramedRead` does: decode until it asks for more, then one read of at
/// most `sizes[i]` bytes into the room the codec left (never more: a read does not grow the
/// buffer), and `decode_eof` at the end. Every frame goes to `each`.
fn read_as_framed(
    codec: &mut FrameCodec,
    input: &[u8],
    sizes: &[usize],
    mut each: impl FnMut(Frame),
) {
    let mut buf = BytesMut::with_capacity(READ_CHUNK_BYTES);
    let mut rest = input;
    let mut i = 0;
    loop {
        while let Ok(Some(f)) = codec.decode(&mut buf) {
            each(f);
        }
        if rest.is_empty() {
            break;
        }
        let room = buf.capacity() - buf.len();
        assert!(room >= READ_CHUNK_BYTES / 4, "room for a read");
        let n = sizes[i % sizes.len()].clamp(1, room).min(rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        i += 1;
    }
    while let Ok(Some(f)) = codec.decode_eof(&mut buf) {
        each(f);
    }
}

/// A line of `len` bytes of letters starting at `first` (no newline, not blank).
fn letters(first: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| b'a' + (first + (i % 26) as u8) % 26)
        .collect()
}

fn with_newline(mut line: Vec<u8>) -> Vec<u8> {
    line.push(b'\n');
    line
}

fn large_codec() -> (FrameCodec, SpareBuffer) {
    let spare = SpareBuffer::new();
    (FrameCodec::new(64 << 20).with_spare(spare.clone()), spare)
}

#[test]
fn a_second_large_line_is_read_into_the_block_of_the_first() {
    let (mut codec, spare) = large_codec();
    let first = letters(0, 3 * KEEP_BUFFER_BYTES + 5);
    let mut got = Vec::new();
    read_as_framed(
        &mut codec,
        &with_newline(first.clone()),
        &[256 * 1024],
        |f| got.push(f),
    );
    let [Frame::Line(line)] = &got[..] else {
        panic!("expected one line, got {} frames", got.len());
    };
    assert_eq!(&line[..], &first[..]);
    let start = line.as_ptr();
    assert_eq!(spare.kept(), None, "the line holds its block");
    drop(got);
    let Some((block, capacity)) = spare.kept() else {
        panic!("the block came back");
    };
    assert_eq!(block, start, "the line was the start of its block");
    // The second line, then a small one after it in the same reads.
    let second = letters(7, 3 * KEEP_BUFFER_BYTES);
    let mut input = with_newline(second.clone());
    input.extend_from_slice(b"{\"small\":1}\n");
    let mut got = Vec::new();
    read_as_framed(&mut codec, &input, &[256 * 1024, 1000, 70_000], |f| {
        got.push(f)
    });
    let [Frame::Line(line), small] = &got[..] else {
        panic!("expected two lines, got {} frames", got.len());
    };
    assert_eq!(&line[..], &second[..]);
    assert_eq!(*small, Frame::Line(Bytes::from_static(b"{\"small\":1}")));
    assert_eq!(line.as_ptr(), block, "read into the first line's block");
    assert_eq!(spare.kept(), None);
    drop(got);
    assert_eq!(
        spare.kept(),
        Some((block, capacity)),
        "the same block came back, not grown"
    );
}

#[test]
fn a_line_under_keep_buffer_bytes_is_copied_out_and_leaves_the_block_to_the_spare() {
    let (mut codec, spare) = large_codec();
    let mut got = Vec::new();
    let large = letters(0, 2 * KEEP_BUFFER_BYTES);
    read_as_framed(&mut codec, &with_newline(large), &[256 * 1024], |f| {
        got.push(f)
    });
    drop(got);
    let Some((block, capacity)) = spare.kept() else {
        panic!("the block came back");
    };
    let generation = spare.watch(None);
    // 100 KiB: moved into the block at its first growth, then copied out.
    let medium = letters(3, 100 * 1024);
    let mut got = Vec::new();
    read_as_framed(&mut codec, &with_newline(medium.clone()), &[20_000], |f| {
        got.push(f)
    });
    let [Frame::Line(line)] = &got[..] else {
        panic!("expected one line, got {} frames", got.len());
    };
    assert_eq!(&line[..], &medium[..]);
    let in_block = block as usize..block as usize + capacity;
    assert!(!in_block.contains(&(line.as_ptr() as usize)), "a copy");
    assert_eq!(
        spare.kept(),
        Some((block, capacity)),
        "kept while the line lives"
    );
    assert_ne!(
        spare.watch(None),
        generation,
        "the block was taken and given back"
    );
}

#[test]
fn a_block_is_not_reused_while_its_line_is_alive() {
    let (mut codec, spare) = large_codec();
    let first = letters(1, 2 * KEEP_BUFFER_BYTES);
    let second = letters(2, 2 * KEEP_BUFFER_BYTES);
    let mut input = with_newline(first.clone());
    input.extend_from_slice(&with_newline(second.clone()));
    let mut got = Vec::new();
    read_as_framed(&mut codec, &input, &[100_000], |f| got.push(f));
    let [Frame::Line(a), Frame::Line(b)] = &got[..] else {
        panic!("expected two lines, got {} frames", got.len());
    };
    assert_eq!((&a[..], &b[..]), (&first[..], &second[..]));
    let a_range = a.as_ptr() as usize..a.as_ptr() as usize + a.len();
    assert!(!a_range.contains(&(b.as_ptr() as usize)));
    let (a, b) = (a.clone(), b.clone());
    drop(got);
    let b_start = b.as_ptr();
    drop(a);
    let Some((kept, kept_capacity)) = spare.kept() else {
        panic!("the first block came back");
    };
    drop(b);
    // Of the two blocks, the larger is kept (the first when they are the same size).
    let Some((now, now_capacity)) = spare.kept() else {
        panic!("a block is kept");
    };
    assert!(now == kept || now == b_start);
    assert!(now_capacity >= kept_capacity);
    if now != kept {
        assert!(
            now_capacity > kept_capacity,
            "replaced only by a larger block"
        );
    }
}

#[test]
fn large_lines_read_through_a_spare_are_exact() {
    let mut input = Vec::new();
    let lines = [
        letters(3, KEEP_BUFFER_BYTES - 1),
        letters(4, KEEP_BUFFER_BYTES),
        letters(5, KEEP_BUFFER_BYTES + 1),
        letters(6, 2 * KEEP_BUFFER_BYTES + 3),
        b"{}".to_vec(),
        letters(8, 5 * KEEP_BUFFER_BYTES / 2),
    ];
    for (i, line) in lines.iter().enumerate() {
        input.extend_from_slice(line);
        // CRLF on some, and a blank large line (skipped) after the second.
        input.extend_from_slice(if i % 2 == 0 { b"\r\n" } else { b"\n" });
        if i == 1 {
            input.extend_from_slice(&vec![b' '; KEEP_BUFFER_BYTES + 7]);
            input.push(b'\n');
        }
    }
    // Over the limit of 4 MiB, then a last line without its newline.
    input.extend_from_slice(&letters(9, 4 * KEEP_BUFFER_BYTES + 1));
    input.extend_from_slice(b"\nlast");
    let mut want: Vec<Frame> = lines.iter().map(|l| line(l)).collect();
    want.push(Frame::TooLong {
        len_bytes: 4 * KEEP_BUFFER_BYTES + 1,
        head: letters(9, TOO_LONG_HEAD_BYTES),
        id: None,
    });
    want.push(line(b"last"));
    for sizes in [&[256 * 1024][..], &[65_536], &[17, 300_000, 4096]] {
        for keep_lines in [false, true] {
            let spare = SpareBuffer::new();
            let mut codec = FrameCodec::new(4 * KEEP_BUFFER_BYTES).with_spare(spare.clone());
            let mut got = Vec::new();
            // Unless kept, each line is copied and dropped: its block comes back at once.
            read_as_framed(&mut codec, &input, sizes, |f| match f {
                Frame::Line(l) if !keep_lines => got.push(line(&l)),
                f => got.push(f),
            });
            assert_eq!(got, want, "reads {sizes:?}, lines kept {keep_lines}");
            drop(got);
            assert!(spare.kept().is_some(), "reads {sizes:?}");
        }
    }
}

#[test]
fn the_encoder_writes_one_line_per_message() {
    let mut codec = FrameCodec::new(100);
    let mut dst = BytesMut::new();
    let msg = json!({"jsonrpc": "2.0", "id": 1, "result": {"text": "a\nb"}});
    assert!(codec.encode(&msg, &mut dst).is_ok());
    assert!(codec.encode(&json!({"x": []}), &mut dst).is_ok());
    let want = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"a\\nb\"}}\n{\"x\":[]}\n";
    assert_eq!(&dst[..], want.as_bytes());
    assert_eq!(
        encode_message(&msg).ok().as_deref(),
        Some(&want.as_bytes()[..want.find('\n').map_or(0, |i| i + 1)])
    );
    // What the encoder writes, the decoder reads back.
    let out = frames_of(&dst, 100, &[5]);
    assert_eq!(
        out,
        vec![
            line(&want.as_bytes()[..want.len() - 10]),
            line(b"{\"x\":[]}"),
        ]
    );
}
