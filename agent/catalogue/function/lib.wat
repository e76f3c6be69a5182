;; Shared by every built-in function artifact, assembled in front of the
;; artifact's own fields (catalogue.ts): the WASI imports, a buffered stdin
;; reader, integer parsing and printing, and a sleep. The artifact declares
;; the memory. Layout of page 0: 0..11 the iovec and count of a call, 64..127
;; digits, 128..211 a poll subscription and its event, 1024.. this file's
;; data, 2048.. the artifact's data, 4096..65535 the stdin buffer.
(import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
(import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
(import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
(import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))

(global $rpos (mut i32) (i32.const 0))
(global $rend (mut i32) (i32.const 0))
;; Whether the last $next_int found one (0 at the end of stdin).
(global $found (mut i32) (i32.const 0))

(data (i32.const 1024) "\n")

;; Writes len bytes at ptr to fd, looping on short writes; exits 70 on an error.
(func $write (param $fd i32) (param $ptr i32) (param $len i32)
  (block $done
    (loop $more
      (br_if $done (i32.eqz (local.get $len)))
      (i32.store (i32.const 0) (local.get $ptr))
      (i32.store (i32.const 4) (local.get $len))
      (if (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8))
        (then (call $proc_exit (i32.const 70))))
      (local.set $ptr (i32.add (local.get $ptr) (i32.load (i32.const 8))))
      (local.set $len (i32.sub (local.get $len) (i32.load (i32.const 8))))
      (br $more))))

(func $newline (param $fd i32)
  (call $write (local.get $fd) (i32.const 1024) (i32.const 1)))

;; Reads up to the stdin buffer's size into it; the count read (0 at the end).
(func $fill (result i32)
  (i32.store (i32.const 0) (i32.const 4096))
  (i32.store (i32.const 4) (i32.const 61440))
  (if (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8))
    (then (call $proc_exit (i32.const 70))))
  (i32.load (i32.const 8)))

;; The next byte of stdin, or -1 at its end.
(func $read_byte (result i32)
  (local $n i32)
  (if (i32.ge_u (global.get $rpos) (global.get $rend))
    (then
      (local.set $n (call $fill))
      (if (i32.eqz (local.get $n)) (then (return (i32.const -1))))
      (global.set $rpos (i32.const 4096))
      (global.set $rend (i32.add (i32.const 4096) (local.get $n)))))
  (global.set $rpos (i32.add (global.get $rpos) (i32.const 1)))
  (i32.load8_u (i32.sub (global.get $rpos) (i32.const 1))))

;; The next integer of stdin (digits, an optional '-' before them). The args
;; are JSON the artifact's schema has checked, so its numbers are the only
;; digits in it; $found is 0 once none is left.
(func $next_int (result i64)
  (local $c i32) (local $neg i32) (local $n i64)
  (global.set $found (i32.const 0))
  (block $start
    (loop $skip
      (local.set $c (call $read_byte))
      (if (i32.eq (local.get $c) (i32.const -1)) (then (return (i64.const 0))))
      (br_if $start (i32.lt_u (i32.sub (local.get $c) (i32.const 48)) (i32.const 10)))
      (local.set $neg (i32.eq (local.get $c) (i32.const 45)))
      (br $skip)))
  (block $end
    (loop $digits
      (br_if $end (i32.ge_u (i32.sub (local.get $c) (i32.const 48)) (i32.const 10)))
      (global.set $found (i32.const 1))
      (local.set $n
        (i64.add (i64.mul (local.get $n) (i64.const 10)) (i64.extend_i32_u (i32.sub (local.get $c) (i32.const 48)))))
      (local.set $c (call $read_byte))
      (br $digits)))
  (if (result i64) (local.get $neg)
    (then (i64.sub (i64.const 0) (local.get $n)))
    (else (local.get $n))))

;; Writes v in decimal to fd.
(func $print_i64 (param $fd i32) (param $v i64)
  (local $p i32) (local $u i64)
  (local.set $p (i32.const 128))
  (local.set $u (local.get $v))
  (if (i64.lt_s (local.get $v) (i64.const 0)) (then (local.set $u (i64.sub (i64.const 0) (local.get $v)))))
  (loop $digit
    (local.set $p (i32.sub (local.get $p) (i32.const 1)))
    (i64.store8 (local.get $p) (i64.add (i64.const 48) (i64.rem_u (local.get $u) (i64.const 10))))
    (local.set $u (i64.div_u (local.get $u) (i64.const 10)))
    (br_if $digit (i64.ne (local.get $u) (i64.const 0))))
  (if (i64.lt_s (local.get $v) (i64.const 0))
    (then
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.const 45))))
  (call $write (local.get $fd) (local.get $p) (i32.sub (i32.const 128) (local.get $p))))

;; Sleeps ms milliseconds: one relative clock subscription to poll_oneoff.
(func $sleep_ms (param $ms i64)
  (i64.store (i32.const 128) (i64.const 0))
  (i32.store8 (i32.const 136) (i32.const 0))
  (i32.store (i32.const 144) (i32.const 1))
  (i64.store (i32.const 152) (i64.mul (local.get $ms) (i64.const 1000000)))
  (i64.store (i32.const 160) (i64.const 0))
  (i32.store16 (i32.const 168) (i32.const 0))
  (drop (call $poll_oneoff (i32.const 128) (i32.const 176) (i32.const 1) (i32.const 208))))
