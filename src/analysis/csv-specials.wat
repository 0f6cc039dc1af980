;; The byte search under the CSV scanner (csv-scanner.ts): where, in a window of input, the bytes
;; that can end or open a field are. Sixteen bytes are compared at once, which a JS loop over
;; single bytes cannot do; the state machine in JS then jumps from one such byte to the next.
;;
;; Memory: the window's bytes at 0, followed by 16 zero bytes (the caller writes them: a zero is
;; not one of the bytes sought, so the last vector can read past the window's end); the positions
;; found, as little-endian i32, from OUT on. Windows are at most 64 KiB, so OUT is 64 KiB + 16 and
;; the positions (at most one per byte) end before 64 KiB + 16 + 256 KiB, inside 6 pages.
;; scripts/build-wasm.mjs turns this file into src/analysis/csv-specials-wasm.ts.
(module
  (memory (export "memory") 6)

  ;; index(len, base): the positions of every comma, quote, LF and CR among bytes [0, len), each
  ;; plus `base` (the window's offset in the caller's data), in increasing order; returns how many.
  (func (export "index") (param $len i32) (param $base i32) (result i32)
    (local $at i32)
    (local $out i32)
    (local $v v128)
    (local $bits i32)
    (local.set $out (i32.const 65552))
    (block $done
      (loop $vectors
        (br_if $done (i32.ge_u (local.get $at) (local.get $len)))
        (local.set $v (v128.load (local.get $at)))
        (local.set $bits
          (i8x16.bitmask
            (v128.or
              (v128.or
                (i8x16.eq (local.get $v) (v128.const i8x16 44 44 44 44 44 44 44 44 44 44 44 44 44 44 44 44))
                (i8x16.eq (local.get $v) (v128.const i8x16 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34)))
              (v128.or
                (i8x16.eq (local.get $v) (v128.const i8x16 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10))
                (i8x16.eq (local.get $v) (v128.const i8x16 13 13 13 13 13 13 13 13 13 13 13 13 13 13 13 13))))))
        ;; One position per set bit, lowest first.
        (block $empty
          (loop $positions
            (br_if $empty (i32.eqz (local.get $bits)))
            (i32.store (local.get $out)
              (i32.add (i32.add (local.get $base) (local.get $at)) (i32.ctz (local.get $bits))))
            (local.set $out (i32.add (local.get $out) (i32.const 4)))
            (local.set $bits (i32.and (local.get $bits) (i32.sub (local.get $bits) (i32.const 1))))
            (br $positions)))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $vectors)))
    (i32.shr_u (i32.sub (local.get $out) (i32.const 65552)) (i32.const 2)))
)
