;; hog: grows its memory by `mib` MiB and touches every 4 KiB of it, then
;; writes `held <mib> MiB`. It declares a 256 MiB maximum, so a job whose
;; memory limit is lower is refused before it starts.
(memory (export "memory") 1 4096)
(data (i32.const 2048) "held ")
(data (i32.const 2064) " MiB")
(data (i32.const 2080) "cannot grow memory\n")
(func (export "_start")
  (local $mib i64) (local $p i32) (local $end i32)
  (local.set $mib (call $next_int))
  (if (i32.eq (memory.grow (i32.wrap_i64 (i64.mul (local.get $mib) (i64.const 16)))) (i32.const -1))
    (then
      (call $write (i32.const 2) (i32.const 2080) (i32.const 19))
      (call $proc_exit (i32.const 1))))
  (local.set $p (i32.const 65536))
  (local.set $end (i32.mul (memory.size) (i32.const 65536)))
  (block $done
    (loop $touch
      (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
      (i32.store8 (local.get $p) (i32.const 1))
      (local.set $p (i32.add (local.get $p) (i32.const 4096)))
      (br $touch)))
  (call $write (i32.const 1) (i32.const 2048) (i32.const 5))
  (call $print_i64 (i32.const 1) (local.get $mib))
  (call $write (i32.const 1) (i32.const 2064) (i32.const 4))
  (call $newline (i32.const 1)))
