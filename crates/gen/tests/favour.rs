//! A favoured kind (`GenConfig::favour`, what `conform triage` steers its
//! later rounds toward) is drawn more often, and the kinds that build what
//! it acts on are still drawn.

use gen::{generate, GenConfig, Kinds, Op};

fn count(favour: Kinds, kind: &str) -> usize {
    (1..=6)
        .map(|seed| {
            let cfg = GenConfig {
                steps: 200,
                favour,
                ..GenConfig::default()
            };
            generate(seed, &cfg)
                .iter()
                .filter(|s| matches!(&s.op, Op::Request(r) if r.kind() == kind))
                .count()
        })
        .sum()
}

#[test]
fn a_favoured_kind_is_drawn_more_often_and_the_rest_still_are() {
    let suspend = Kinds::NONE.with("task.suspend").unwrap();
    let (plain, favoured) = (
        count(Kinds::NONE, "task.suspend"),
        count(suspend, "task.suspend"),
    );
    assert!(favoured >= 2 * plain, "{plain} plain, {favoured} favoured");
    assert!(count(suspend, "task.create") > 0);
    assert!(count(suspend, "promise.create") > 0);
    assert_eq!(Kinds::NONE.with("debug.tick"), None);
}
