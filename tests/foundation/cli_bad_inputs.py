#!/usr/bin/env python3
"""Every bad input of issue 2 through the real `seatrt check`: a non-zero
exit (never a crash, i.e. never a signal), exactly one line on stderr, and
that line names the file, key or plugin at fault."""
import json
import os
import shutil
import socket

from cli_util import (ABI, EXAMPLES, PLUGINS, TEMPLATE, TEST_PLUGINS, TOKENIZER, check, finish, seat_text, seatrt,
                      tempdir, write_seat)


def expect_error(label, seat_file, *needles, args=()):
    rc, out, err = seatrt("check", seat_file, *args)
    lines = [l for l in err.splitlines() if l.strip()]
    check(rc == 1, f"{label}: exit code {rc}, expected 1 (stderr: {err!r})")
    check(len(lines) == 1, f"{label}: expected one line on stderr, got {lines!r}")
    check(out == "", f"{label}: nothing on stdout, got {out!r}")
    for needle in needles:
        check(needle in err, f"{label}: {needle!r} not in {err!r}")


with tempdir() as d:
    paths = [TEST_PLUGINS, EXAMPLES, PLUGINS]
    # Malformed TOML, with line and column.
    f = write_seat(d, "malformed.toml", '[seat]\nname = "x"\n[model\npath = "."\n')
    expect_error("malformed TOML", f, "malformed.toml:3:", "malformed TOML")
    # Unknown key, with the closest valid key suggested.
    f = write_seat(d, "typo.toml", seat_text() + "[scheduler]\nmax_num_seq = 4\n")
    expect_error("unknown key", f, "typo.toml:", "unknown key 'scheduler.max_num_seq'",
                 "did you mean 'scheduler.max_num_seqs'?")
    # Wrong type: key, expected and found type.
    f = write_seat(d, "type.toml", seat_text() + "[server]\nport = \"eighty\"\n")
    expect_error("wrong type", f, "type.toml:", "'server.port' must be an integer, found string")
    # Missing plugin file.
    f = write_seat(d, "missing.toml", seat_text(tool="libnothere.so", search_paths=paths))
    expect_error("missing plugin file", f, "'libnothere.so' does not exist")
    # Not a shared library (dlopen's reason shown).
    f = write_seat(d, "notelf.toml", seat_text(tool="libbroken_not_elf.so", search_paths=paths))
    expect_error("not a shared library", f, "libbroken_not_elf.so' is not a loadable shared library")
    # Lacks the entry symbol.
    f = write_seat(d, "noentry.toml", seat_text(tool="libbroken_no_entry.so", search_paths=paths))
    expect_error("no entry symbol", f, "libbroken_no_entry.so", "lacks the entry symbol seatrt_plugin_init")
    # A name no seat could use (a '/', a newline): refused at load.
    f = write_seat(d, "badname.toml", seat_text(tool="libtest_bad_name.so", search_paths=paths))
    expect_error("unusable plugin name", f, "libtest_bad_name.so", "its name must be printable ASCII")
    # The entry symbol is a data object: refused, not called.
    f = write_seat(d, "dataentry.toml", seat_text(tool="libbroken_entry_is_data.so", search_paths=paths))
    expect_error("entry symbol not a function", f, "libbroken_entry_is_data.so", "is not a function")
    # Another ABI major, naming both versions.
    f = write_seat(d, "major.toml", seat_text(tool="libtest_other_major.so", search_paths=paths))
    expect_error("other ABI major", f, "libtest_other_major.so", "ABI 1.7", ABI)
    # initialize() fails: the plugin's own message.
    f = write_seat(d, "initfail.toml", seat_text(tool="test-init-fails", search_paths=paths))
    expect_error("init fails", f, "test-init-fails", "the licence file /etc/nowhere.lic is missing")
    # initialize() throws: reported, no crash.
    f = write_seat(d, "initthrow.toml", seat_text(tool="test-init-throws", search_paths=paths))
    expect_error("init throws", f, "test-init-throws", "threw an exception")
    # Tables with slots the host calls unconditionally left NULL: refused at
    # load (serve used to crash on the first request), naming the slots.
    f = write_seat(d, "nofeed.toml", seat_text(tool="test-parser-no-feed", search_paths=paths))
    expect_error("parser without feed", f, "test-parser-no-feed", "libtest_parser_no_feed.so", "lacks feed")
    f = write_seat(d, "noalloc.toml", seat_text(provider="test-kernels-no-alloc", search_paths=paths))
    expect_error("provider without alloc", f, "test-kernels-no-alloc", "alloc", "copy")
    # A library whose static initialiser throws, in a search path: seats
    # that do not use it still load; a name it might have held is reported
    # as not found with that library's reason.
    broken_dir = os.environ["SEATRT_BROKEN_INIT_DIR"]
    f = write_seat(d, "bystander.toml", seat_text(search_paths=[broken_dir] + paths))
    rc, out, err = seatrt("check", f)
    check(rc == 0, f"a seat beside a library that throws while loading: rc {rc}, {err!r}")
    f = write_seat(d, "unreadable.toml", seat_text(tool="my-parser", search_paths=[broken_dir] + paths))
    expect_error("unreadable library", f, "no tool parser plugin named 'my-parser'", "libbroken_static_init.so",
                 "global constructor")
    # Two libraries giving the same name for one kind: neither is taken by
    # search order; both files are named.
    clone_dir = os.path.join(d, "clone")
    os.mkdir(clone_dir)
    shutil.copy(os.path.join(TEST_PLUGINS, "libtest_shout.so"), os.path.join(clone_dir, "libshout_copy.so"))
    f = write_seat(d, "twice.toml", seat_text(tool="test-shout", search_paths=[clone_dir] + paths))
    expect_error("same name twice", f, "two tool parser plugins are named 'test-shout'", "libshout_copy.so",
                 "libtest_shout.so")
    # A different kind than asked, naming what it provides.
    f = write_seat(d, "kind.toml", seat_text(provider="example-call", search_paths=paths))
    expect_error("wrong kind", f, "'example-call'", "provides tool parser, not a kernel provider")
    # A path escaping the search paths.
    f = write_seat(d, "escape.toml", seat_text(tool="../../../../etc/libc.so", search_paths=paths))
    expect_error("escaping path", f, "libc.so")
    # A seat file that does not exist.
    expect_error("no seat file", os.path.join(d, "absent.toml"), "absent.toml")
    # A bad --log-format flag.
    f = write_seat(d, "ok.toml", seat_text())
    expect_error("bad log format", f, "unknown log format 'yaml'", args=("--log-format", "yaml"))

    # toml++'s own parse errors (bytes that are not UTF-8, an integer beyond
    # 64 bits): one line with file, line and column, never an abort.
    bad_utf8 = os.path.join(d, "utf8.toml")
    with open(bad_utf8, "wb") as fb:
        fb.write(b'[seat]\nname = "d\xffx"\n')
    expect_error("invalid UTF-8", bad_utf8, "utf8.toml:2:", "malformed TOML")
    f = write_seat(d, "bigint.toml", '[seat]\nname = "x"\n[server]\nport = 99999999999999999999\n')
    expect_error("integer beyond 64 bits", f, "bigint.toml:4:", "malformed TOML")
    # A FIFO in place of the seat file is refused, not waited on.
    fifo = os.path.join(d, "fifo.toml")
    os.mkfifo(fifo)
    expect_error("FIFO seat file", fifo, "fifo.toml", "not a regular file")

    # check reads the tokenizer and the chat template as serve will: a
    # missing tokenizer, a template with a syntax error or bytes that are not
    # UTF-8 are found by check, naming the file.
    f = write_seat(d, "notok.toml", seat_text().replace(TOKENIZER, os.path.join(d, "absent-tokenizer.json")))
    expect_error("missing tokenizer", f, "absent-tokenizer.json", "does not exist")
    # With a JSON log, check's fatal line is JSON too.
    f = write_seat(d, "notmpl-json.toml", seat_text().replace(TEMPLATE, os.path.join(d, "absent.jinja")))
    rc, out, err = seatrt("check", f, "--log-format", "json")
    check(rc == 1 and "absent.jinja" in json.loads(err.splitlines()[-1])["msg"], f"check's JSON fatal line: {err!r}")
    # A chat template the seat file names must exist (only the default one
    # beside the model may be absent): before, check passed and every chat
    # request answered 500.
    f = write_seat(d, "notmpl.toml", seat_text().replace(TEMPLATE, os.path.join(d, "absent.jinja")))
    expect_error("missing chat template", f, "model.chat_template", "absent.jinja", "does not exist")
    broken = os.path.join(d, "broken.jinja")
    with open(broken, "w") as fb:
        fb.write("{% for m in messages %}{{ m.content }")
    f = write_seat(d, "tmpl.toml", seat_text().replace(TEMPLATE, broken))
    expect_error("template syntax error", f, "broken.jinja", "template line")
    latin = os.path.join(d, "latin1.jinja")
    with open(latin, "wb") as fb:
        fb.write(b"\xff\xfe{{ bos_token }}")
    f = write_seat(d, "latin.toml", seat_text().replace(TEMPLATE, latin))
    expect_error("template not UTF-8", f, "latin1.jinja", "not valid UTF-8")

    # What serve refuses in [server], check refuses too.
    f = write_seat(d, "host.toml", seat_text(extra='[server]\nhost = "localhost"\n'))
    expect_error("host not an IP", f, "host.toml", "[server] host 'localhost' is not an IP address")
    f = write_seat(d, "key.toml", seat_text(extra='[server]\napi_key_env = "SEATRT_TEST_UNSET_KEY_VAR"\n'))
    expect_error("api key variable unset", f, "key.toml", "$SEATRT_TEST_UNSET_KEY_VAR")
    # A port in use is found before the model loads, and with a JSON log the
    # fatal line is JSON too.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        f = write_seat(d, "busy.toml", seat_text(extra=f'[server]\nport = {port}\n'))
        rc, out, err = seatrt("serve", f, "--log-format", "json")
        lines = [json.loads(line) for line in err.splitlines() if line.strip()]
        check(rc == 1, f"serve on a port in use: rc {rc}, {err!r}")
        check("cannot listen on 127.0.0.1:%d" % port in lines[-1].get("msg", ""), f"last line: {lines[-1]!r}")
        check(not any("KV pool" in line.get("msg", "") for line in lines), f"the model loaded first: {err!r}")

    # Usage errors exit 2 with the usage text.
    rc, _, err = seatrt("check")
    check(rc == 2 and "usage: seatrt check" in err, f"check without a file: rc {rc}, {err!r}")
    rc, _, err = seatrt("serve", f, "--bogus")
    check(rc == 2 and "unknown option '--bogus'" in err, f"serve --bogus: rc {rc}, {err!r}")

finish()
