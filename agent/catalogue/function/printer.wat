;; printer: writes `line 1` … `line <lines>` on stdout, pausing `pause_ms`
;; after each, then `printed <lines> lines` on stderr.
(memory (export "memory") 1 1)
(data (i32.const 2048) "line ")
(data (i32.const 2064) "printed ")
(data (i32.const 2080) " lines\n")
(func (export "_start")
  (local $lines i64) (local $pause i64) (local $i i64)
  (local.set $lines (call $next_int))
  (local.set $pause (call $next_int))
  (block $done
    (loop $line
      (br_if $done (i64.ge_s (local.get $i) (local.get $lines)))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (call $write (i32.const 1) (i32.const 2048) (i32.const 5))
      (call $print_i64 (i32.const 1) (local.get $i))
      (call $newline (i32.const 1))
      (if (i64.gt_s (local.get $pause) (i64.const 0)) (then (call $sleep_ms (local.get $pause))))
      (br $line)))
  (call $write (i32.const 2) (i32.const 2064) (i32.const 8))
  (call $print_i64 (i32.const 2) (local.get $lines))
  (call $write (i32.const 2) (i32.const 2080) (i32.const 7)))
