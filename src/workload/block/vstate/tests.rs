use super::*;
use crate::io::verify::covered;

fn job(name: &str) -> Job {
    Job {
        name: name.into(),
        ..Job::default()
    }
}

#[test]
fn writes_merge_into_ranges_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let job = job("j");
    let written = [(8192, 4096), (0, 4096), (4096, 4096), (65536, 4096)];
    let r = ranges(&written);
    assert_eq!(r, [Span::new(0, 12288), Span::new(65536, 69632)]);
    assert!(covered(&r, 4096, 4096));
    assert!(covered(&r, 65536, 4096));
    assert!(!covered(&r, 12288, 4096), "past the first range");
    assert!(!covered(&r, 8192, 8192), "across its end");
    let d = dir.path();
    let saved = save(d, &job, 0, &written).unwrap();
    assert_eq!(saved, d.join("local-j-0-verify.state"));
    assert_eq!(load(d, &job, 0, Span::new(0, 1 << 20)).unwrap(), r);
    assert!(load(d, &job, 1, Span::new(0, 1 << 20))
        .unwrap_err()
        .contains("verify_state_save=1 first"));
    std::fs::write(path(d, &job, 2), [7u8, 0, 0, 0, 0xff, 0xfe]).unwrap();
    let foreign = load(d, &job, 2, Span::new(0, 1 << 20));
    assert!(foreign.unwrap_err().contains("fio's binary layout"));
}

#[test]
fn a_state_that_is_not_whole_and_this_workers_is_refused_by_line() {
    let good = text("vjob", 0, &[(0, 65536), (131072, 65536)]);
    let span = Span::new(0, 1 << 20);
    assert_eq!(
        parse(good.as_bytes(), "vjob", 0, span),
        Ok(vec![Span::new(0, 65536), Span::new(131072, 196608)])
    );
    let line = |t: &str, span: Span| match parse(t.as_bytes(), "vjob", 0, span) {
        Err(Bad::Line(n, _)) => n,
        other => panic!("{t:?}: {other:?}"),
    };
    let head = "fsbench verify state 1\njob vjob\nclone 0\n";
    // Torn in the counts, in a range, or its last line unended.
    assert_eq!(line(&format!("{head}writ"), span), 4);
    assert_eq!(line(head, span), 4);
    assert_eq!(
        line(&format!("{head}writes 2\nranges 2\n0 65536\n"), span),
        7
    );
    assert_eq!(line(&good[..good.len() - 1], span), 7);
    assert_eq!(line(&good[..good.len() - 3], span), 7);
    // Another job's or worker's, or another header.
    assert_eq!(line(&good.replace("job vjob", "job other"), span), 2);
    assert_eq!(line(&good.replace("clone 0", "clone 1"), span), 3);
    assert_eq!(line(&good.replace("state 1", "state 2"), span), 1);
    // Counts that do not match, ranges reversed, overlapping, touching, empty, overflowing,
    // below the region or past its end, or not numbers.
    let ranges = |body: &str, n: usize| format!("{head}writes 9\nranges {n}\n{body}");
    assert_eq!(line(&ranges("0 4096\n", 2), span), 7);
    assert_eq!(line(&ranges("0 4096\n8192 4096\n", 1), span), 7);
    assert_eq!(line(&good.replace("writes 2", "writes 1"), span), 5);
    assert_eq!(line(&ranges("8192 4096\n0 4096\n", 2), span), 7);
    assert_eq!(line(&ranges("0 8192\n4096 4096\n", 2), span), 7);
    assert_eq!(line(&ranges("0 4096\n4096 4096\n", 2), span), 7);
    assert_eq!(line(&ranges("0 0\n", 1), span), 6);
    assert_eq!(
        line(
            &ranges("4096 18446744073709551615\n", 1),
            Span::new(0, u64::MAX)
        ),
        6
    );
    assert_eq!(line(&ranges("0 4096\n", 1), Span::new(4096, 1 << 20)), 6);
    assert_eq!(line(&ranges("1044480 8192\n", 1), span), 6);
    assert_eq!(line(&ranges("-1 4096\n", 1), span), 6);
    assert_eq!(line(&ranges("0 4096 1\n", 1), span), 6);
    assert_eq!(line(&ranges("0x0 4096\n", 1), span), 6);
    assert_eq!(line(&format!("{head}writes x\nranges 0\n"), span), 4);
    assert_eq!(parse(&[0xff, 0xfe], "vjob", 0, span), Err(Bad::Foreign));
}

#[test]
fn what_a_refused_state_says_names_the_file_and_line_not_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = job("vjob");
    std::fs::write(
        path(d, &job, 0),
        "fsbench verify state 1\njob s3cr3t\nclone 0\n",
    )
    .unwrap();
    let e = load(d, &job, 0, Span::new(0, 1 << 20)).unwrap_err();
    assert!(
        e.contains("local-vjob-0-verify.state line 2: expected 'job vjob'"),
        "{e}"
    );
    assert!(
        e.contains("verify_state_save=1") && !e.contains("s3cr3t"),
        "{e}"
    );
}
