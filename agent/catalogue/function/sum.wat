;; sum: writes the sum of `numbers` on stdout.
(memory (export "memory") 1 1)
(func (export "_start")
  (local $sum i64) (local $n i64)
  (block $end
    (loop $next
      (local.set $n (call $next_int))
      (br_if $end (i32.eqz (global.get $found)))
      (local.set $sum (i64.add (local.get $sum) (local.get $n)))
      (br $next)))
  (call $print_i64 (i32.const 1) (local.get $sum))
  (call $newline (i32.const 1)))
