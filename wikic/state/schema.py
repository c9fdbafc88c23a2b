"""What state.db is: its format number, its tables, and the keys of its `meta` table."""

from __future__ import annotations

from enum import StrEnum

FORMAT = 1


class Meta(StrEnum):
    """Every key of the `meta` table, and what its value holds."""

    FORMAT = "format"  # the state format (FORMAT) that wrote the database
    CLEAN = "clean"  # the build's mark of inputs and wiki/ after a clean build ("" after any other)
    PAGES = "pages"  # pages and actions the last finished build counted: a no-op build reports them
    ACTIONS = "actions"
    UPTODATE = "uptodate"  # the no-op check's mark (JSON), with the figures a skipped build reports
    LINT_ACROSS = "lint_across"  # the findings of the rules across pages, by what they read (JSON)
    LINT_NAMES = "lint_names"  # the wiki's names as the last full lint read them (marshalled)
    LINT_NAMES_MORE = "lint_names_more"  # the names of the pages added since, by the build (JSON)
    LINT_TOTALS = "lint_totals"  # the build's lint summary kept with what lets an edit patch it (JSON)
    LINT_KEPT = "lint_kept"  # `wikic lint`'s findings, kept for the build's clean mark they were made at
    SETTLED = "settled"  # what the last finished build read its sources with, and when (JSON)
    SETTLED_LINES = "settled_lines"  # its settled sources' walk lines, paths and hashes (settled.py)
    ASK_SAVED = "ask_saved_mark"  # the build's "clean" mark as it is with a just-saved answer
    ASK_KEYS = "ask_keys"  # what an answer's key reads of the wiki and its sources, by its mark (ask)
    ASSEMBLED = "assembled"  # what the last assembly's keys went by (build/assemble.py)
    WIKI_LEFT = "wiki_left"  # wiki/'s digest as the last build without errors left it (build/quick.py)
    FOREIGN_LEFT = "foreign_left"  # its pages not the build's, as it left them (build/handmade.py)
    CONFLICTS = "conflicts"  # its pages edited by hand that it kept, as it found them (handmade.py)
    OTHERS_LEFT = "others_left"  # the walk lines of wiki/'s files not pages, as it left them (handmade.py)
    INDEX_OWN = (
        "index_own"  # index.md's hash as it made it, size, mtime, while wiki/'s is edited (ownindex.py)
    )
    ZEROED = "zeroed"  # "1": every byte deleted since the database was made or last compacted was zeroed


# the index of what each page links to: dropped while an assembly writes every page's links
# anew, made again after (state/incremental.py: 800,000 rows at 100,000 pages, 3.9 s -> 1.8 s);
# covering, so that a page's links are read from it alone, side by side (a topic page of 1,300
# sources: its 1,300 rows of the table, each on a page of its own, took 0.13 s cold)
LINKS_INDEX = "assembled_links_by_slug"
LINKS_BY_SLUG = f"CREATE INDEX IF NOT EXISTS {LINKS_INDEX} ON assembled_links (slug, target)"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, hash TEXT);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY, stage TEXT, output TEXT NOT NULL,
    prompt_tokens INTEGER, completion_tokens INTEGER, created REAL);
CREATE TABLE IF NOT EXISTS actions (
    id TEXT PRIMARY KEY, stage TEXT, key TEXT, inputs TEXT, updated REAL);
-- the answers of stages not the model's (ask's, and stages an older wikic had), which the
-- privacy purge drops (privacy/forget.py: MODEL_STAGES): found here, not by reading every answer
CREATE INDEX IF NOT EXISTS cache_others ON cache (key) WHERE stage NOT IN ('digest', 'write');
CREATE INDEX IF NOT EXISTS actions_keys ON actions (id, stage, key);
CREATE INDEX IF NOT EXISTS actions_key ON actions (key);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, hash TEXT, size INTEGER, mtime_ns INTEGER);
CREATE TABLE IF NOT EXISTS slugs (page_id TEXT PRIMARY KEY, slug TEXT UNIQUE);
CREATE TABLE IF NOT EXISTS lint_pages (
    rel TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, key TEXT, facts TEXT, findings TEXT);
CREATE INDEX IF NOT EXISTS lint_pages_found ON lint_pages (rel) WHERE findings != '[]';
CREATE TABLE IF NOT EXISTS lint_deps (source TEXT, rel TEXT, PRIMARY KEY (source, rel));
CREATE INDEX IF NOT EXISTS lint_deps_rel ON lint_deps (rel);
CREATE TABLE IF NOT EXISTS lint_text (rel TEXT PRIMARY KEY, text TEXT);
CREATE TABLE IF NOT EXISTS lint_blocks (rel TEXT, key TEXT, findings TEXT, PRIMARY KEY (rel, key));
CREATE TABLE IF NOT EXISTS lint_mentions (
    key TEXT, rel TEXT, line INTEGER, terms TEXT, PRIMARY KEY (key, rel));
CREATE INDEX IF NOT EXISTS lint_mentions_rel ON lint_mentions (rel);
CREATE TABLE IF NOT EXISTS lint_records (
    rel TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, across TEXT, hash TEXT,
    cached INTEGER, orphanable INTEGER);
CREATE TABLE IF NOT EXISTS lint_sources (
    rel TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, read_size INTEGER, read_mtime_ns INTEGER,
    read_hash TEXT);
CREATE TABLE IF NOT EXISTS assembled (
    slug TEXT PRIMARY KEY, body_key TEXT, page_key TEXT, links TEXT, description TEXT);
CREATE TABLE IF NOT EXISTS assembled_links (slug TEXT, target TEXT, PRIMARY KEY (target, slug));
DROP INDEX IF EXISTS assembled_links_slug; -- by page alone, as an older wikic made it
{LINKS_BY_SLUG};
CREATE TABLE IF NOT EXISTS assembled_entries (
    slug TEXT PRIMARY KEY, title TEXT, type TEXT, aliases TEXT, page_id TEXT);
CREATE TABLE IF NOT EXISTS assembled_names (name TEXT PRIMARY KEY, slug TEXT);
CREATE TABLE IF NOT EXISTS assembled_text (slug TEXT PRIMARY KEY, text TEXT);
CREATE TABLE IF NOT EXISTS composed (page_id TEXT PRIMARY KEY, key TEXT, text TEXT);
CREATE TABLE IF NOT EXISTS planned (
    path TEXT PRIMARY KEY, key TEXT, facts TEXT, notes_key TEXT, notes TEXT);
CREATE INDEX IF NOT EXISTS planned_keys ON planned (path, key) WHERE key != '';
CREATE TABLE IF NOT EXISTS planned_struct (path TEXT PRIMARY KEY, key TEXT, notes TEXT);
-- Of each source's planned facts, the names and phrases of its packed names (candidates.searched):
-- what a patched merge searches every source for, a key newly picked (0.75 of 2.8 KB a source).
-- A row goes where its source's facts change or go, by any writer (an older wikic too), so that
-- one there is of the facts as they are; a source without one is searched in its facts.
CREATE TABLE IF NOT EXISTS planned_names (path TEXT PRIMARY KEY, names TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS planned_names_stale AFTER UPDATE OF key, facts ON planned
    BEGIN DELETE FROM planned_names WHERE path = old.path; END;
CREATE TRIGGER IF NOT EXISTS planned_names_gone AFTER DELETE ON planned
    BEGIN DELETE FROM planned_names WHERE path = old.path; END;
CREATE TABLE IF NOT EXISTS kept (name TEXT PRIMARY KEY, blob BLOB NOT NULL);
-- What `wikic ask` reads of each page (ask/index.py), by the page's stat: a question over a
-- large wiki reads only the pages changed since; those of the pages a forgetting build changed dropped.
CREATE TABLE IF NOT EXISTS ask_pages (
    rel TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, head BLOB NOT NULL, body BLOB NOT NULL);
-- Beside each record, what ranking reads of its page as text (ask/terms.py): a question finds its
-- own words' lines in each, and reads the records of the pages it shows alone.
CREATE TABLE IF NOT EXISTS ask_terms (rel TEXT PRIMARY KEY, terms TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kept_pages (id TEXT PRIMARY KEY, page BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS kept_heads (id TEXT PRIMARY KEY, head TEXT NOT NULL) WITHOUT ROWID;
-- Any change of the planned rows, by any writer (an older wikic too), marks the kept plan as not
-- of them (incremental.py's 'plan?'), until a plan of them keeps its own: the rows need not be
-- read and compared with the kept plan's keys at every edit (100,000 of them).
CREATE TRIGGER IF NOT EXISTS planned_insert AFTER INSERT ON planned
    WHEN NOT EXISTS (SELECT 1 FROM kept WHERE name = 'plan?')
    BEGIN INSERT INTO kept VALUES ('plan?', x''); END;
CREATE TRIGGER IF NOT EXISTS planned_update AFTER UPDATE ON planned
    WHEN NOT EXISTS (SELECT 1 FROM kept WHERE name = 'plan?')
    BEGIN INSERT INTO kept VALUES ('plan?', x''); END;
CREATE TRIGGER IF NOT EXISTS planned_delete AFTER DELETE ON planned
    WHEN NOT EXISTS (SELECT 1 FROM kept WHERE name = 'plan?')
    BEGIN INSERT INTO kept VALUES ('plan?', x''); END;
-- Any change of the sticky slugs, by any writer, lets go the mark that they are the kept plan's
-- heads (incremental.py's 'heads=slugs', with that plan's token), until a plan that finds them
-- so marks it again: an edit's plan takes the heads it reads anyway as the sticky slugs then,
-- and does not read 100,000 slugs twice.
CREATE TRIGGER IF NOT EXISTS slugs_insert AFTER INSERT ON slugs
    WHEN EXISTS (SELECT 1 FROM kept WHERE name = 'heads=slugs')
    BEGIN DELETE FROM kept WHERE name = 'heads=slugs'; END;
CREATE TRIGGER IF NOT EXISTS slugs_update AFTER UPDATE ON slugs
    WHEN EXISTS (SELECT 1 FROM kept WHERE name = 'heads=slugs')
    BEGIN DELETE FROM kept WHERE name = 'heads=slugs'; END;
CREATE TRIGGER IF NOT EXISTS slugs_delete AFTER DELETE ON slugs
    WHEN EXISTS (SELECT 1 FROM kept WHERE name = 'heads=slugs')
    BEGIN DELETE FROM kept WHERE name = 'heads=slugs'; END;
CREATE TABLE IF NOT EXISTS batches (
    token TEXT PRIMARY KEY, stage TEXT, file_id TEXT, batch_id TEXT, created REAL);
CREATE TABLE IF NOT EXISTS batch_items (token TEXT, key TEXT, PRIMARY KEY (token, key));
""".replace("{LINKS_BY_SLUG}", LINKS_BY_SLUG)
