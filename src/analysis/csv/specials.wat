;; The byte search under the CSV scanner (scanner.ts): where, in a window of input, the bytes
;; that can end or open a field are. Sixteen bytes are compared at once, which a JS loop over
;; single bytes cannot do; the state machine in JS then jumps from one such byte to the next.
;;
;; Memory: the window's bytes at 0, followed by PADDING zero bytes (the caller writes them: a zero
;; is not one of the bytes sought, so the last vector can read past the window's end); the
;; positions found, as little-endian i32, from POSITIONS_AT on; after them, the fields of the
;; record `record` read: their starts (i32) at STARTS_AT, their ends at ENDS_AT, their escaped
;; flags (one byte each) at ESCAPED_AT; at RECORD_AT and RECORD_END_AT the record's field count
;; and the offset after its line break, and at KEY_HASH_AT the i64 hash of its key (see keyHash).
;; The numbers are written in specials-layout.ts alone: scripts/build-wasm.mjs puts each in
;; the places below that name it in double braces, and turns this file into specials-wasm.ts.
(module
  (memory (export "memory") {{PAGES}})

  ;; index(len, base): the positions of every comma, quote, LF and CR among bytes [0, len), each
  ;; plus `base` (the window's offset in the caller's data), in increasing order; returns how many.
  ;; 64 bytes per step: the four vectors' matches as one 64-bit mask, so the loop that turns bits
  ;; into positions ends (a branch the CPU cannot predict) once per 64 bytes rather than per 16.
  (func (export "index") (param $len i32) (param $base i32) (result i32)
    (local $at i32)
    (local $out i32)
    (local $bits i64)
    (local $pos i32)
    (local $v v128)
    (local $comma v128)
    (local $quote v128)
    (local $lf v128)
    (local $cr v128)
    (local.set $comma (i8x16.splat (i32.const 44)))
    (local.set $quote (i8x16.splat (i32.const 34)))
    (local.set $lf (i8x16.splat (i32.const 10)))
    (local.set $cr (i8x16.splat (i32.const 13)))
    (local.set $out (i32.const {{POSITIONS_AT}}))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $at) (local.get $len)))
        (local.set $bits (i64.const 0))
        (local.set $v (v128.load (local.get $at)))
        (local.set $bits
          (i64.or (local.get $bits)
            (i64.shl
              (i64.extend_i32_u
                (i8x16.bitmask
                  (v128.or
                    (v128.or (i8x16.eq (local.get $v) (local.get $comma)) (i8x16.eq (local.get $v) (local.get $quote)))
                    (v128.or (i8x16.eq (local.get $v) (local.get $lf)) (i8x16.eq (local.get $v) (local.get $cr))))))
              (i64.const 0))))
        (local.set $v (v128.load (i32.add (local.get $at) (i32.const 16))))
        (local.set $bits
          (i64.or (local.get $bits)
            (i64.shl
              (i64.extend_i32_u
                (i8x16.bitmask
                  (v128.or
                    (v128.or (i8x16.eq (local.get $v) (local.get $comma)) (i8x16.eq (local.get $v) (local.get $quote)))
                    (v128.or (i8x16.eq (local.get $v) (local.get $lf)) (i8x16.eq (local.get $v) (local.get $cr))))))
              (i64.const 16))))
        (local.set $v (v128.load (i32.add (local.get $at) (i32.const 32))))
        (local.set $bits
          (i64.or (local.get $bits)
            (i64.shl
              (i64.extend_i32_u
                (i8x16.bitmask
                  (v128.or
                    (v128.or (i8x16.eq (local.get $v) (local.get $comma)) (i8x16.eq (local.get $v) (local.get $quote)))
                    (v128.or (i8x16.eq (local.get $v) (local.get $lf)) (i8x16.eq (local.get $v) (local.get $cr))))))
              (i64.const 32))))
        (local.set $v (v128.load (i32.add (local.get $at) (i32.const 48))))
        (local.set $bits
          (i64.or (local.get $bits)
            (i64.shl
              (i64.extend_i32_u
                (i8x16.bitmask
                  (v128.or
                    (v128.or (i8x16.eq (local.get $v) (local.get $comma)) (i8x16.eq (local.get $v) (local.get $quote)))
                    (v128.or (i8x16.eq (local.get $v) (local.get $lf)) (i8x16.eq (local.get $v) (local.get $cr))))))
              (i64.const 48))))
        ;; The last block reads past the window (memory after it, whatever it holds): those bits go.
        (if (i32.lt_u (i32.sub (local.get $len) (local.get $at)) (i32.const 64))
          (then
            (local.set $bits
              (i64.and (local.get $bits)
                (i64.sub
                  (i64.shl (i64.const 1) (i64.extend_i32_u (i32.sub (local.get $len) (local.get $at))))
                  (i64.const 1))))))
        (local.set $pos (i32.add (local.get $base) (local.get $at)))
        ;; One position per set bit, lowest first.
        (block $empty
          (loop $positions
            (br_if $empty (i64.eqz (local.get $bits)))
            (i32.store (local.get $out)
              (i32.add (local.get $pos) (i32.wrap_i64 (i64.ctz (local.get $bits)))))
            (local.set $out (i32.add (local.get $out) (i32.const 4)))
            (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
            (br $positions)))
        (local.set $at (i32.add (local.get $at) (i32.const 64)))
        (br $blocks)))
    (i32.shr_u (i32.sub (local.get $out) (i32.const {{POSITIONS_AT}})) (i32.const 2)))

  ;; record(k, found, base, start, maxFields, maxField, keyFields): the record that starts at `start` (in the
  ;; caller's data; `base` is the window's offset there, as given to index), whose first special
  ;; byte is position `k` of the `found` ones. When all its fields are unquoted and an LF inside the
  ;; window ends it, its fields are written (see Memory) and the index of the position after its
  ;; LF is returned; otherwise -1, and the caller reads the record itself: a quote (a quoted field,
  ;; or a stray quote to report), a CR, the window's end, more than maxFields fields or a field
  ;; longer than maxField bytes. The bytes of its first keyFields fields, commas between them
  ;; included, are hashed (0 when it has fewer, or the last of them is not ended by a comma or a
  ;; line break), also when the record is then declined.
  (func (export "record") (param $k i32) (param $found i32) (param $base i32) (param $start i32)
    (param $maxFields i32) (param $maxField i32) (param $keyFields i32) (result i32)
    (local $recordStart i32)
    (local $count i32)
    (local $p i32)
    (local $b i32)
    (local $slot i32)
    (local.set $recordStart (local.get $start))
    (i64.store (i32.const {{KEY_HASH_AT}}) (i64.const 0))
    (block $other
      (loop $fields
        (br_if $other (i32.ge_u (local.get $k) (local.get $found)))
        (local.set $p
          (i32.load (i32.add (i32.const {{POSITIONS_AT}}) (i32.shl (local.get $k) (i32.const 2)))))
        (local.set $b (i32.load8_u (i32.sub (local.get $p) (local.get $base))))
        (br_if $other
          (i32.or
            (i32.ge_u (local.get $count) (local.get $maxFields))
            (i32.gt_s (i32.sub (local.get $p) (local.get $start)) (local.get $maxField))))
        (local.set $slot (i32.shl (local.get $count) (i32.const 2)))
        (i32.store (i32.add (i32.const {{STARTS_AT}}) (local.get $slot)) (local.get $start))
        (i32.store (i32.add (i32.const {{ENDS_AT}}) (local.get $slot)) (local.get $p))
        (i32.store8 (i32.add (i32.const {{ESCAPED_AT}}) (local.get $count)) (i32.const 0))
        (local.set $count (i32.add (local.get $count) (i32.const 1)))
        ;; Only a key whose last field ends at a comma or a line break: a quote there would make
        ;; it another key (the caller may use the hash of a record it reads itself).
        (if (i32.and (i32.eq (local.get $count) (local.get $keyFields))
              (i32.or (i32.eq (local.get $b) (i32.const 44))
                (i32.or (i32.eq (local.get $b) (i32.const 10)) (i32.eq (local.get $b) (i32.const 13)))))
          (then
            (call $keyHash
              (i32.sub (local.get $recordStart) (local.get $base))
              (i32.sub (local.get $p) (local.get $recordStart)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (local.set $start (i32.add (local.get $p) (i32.const 1)))
        (br_if $fields (i32.eq (local.get $b) (i32.const 44)))
        ;; CR LF ends it too (the LF, right after, is the next position); a lone CR does not here.
        (if (i32.eq (local.get $b) (i32.const 13))
          (then
            (br_if $other
              (i32.ne (i32.load8_u (i32.sub (local.get $start) (local.get $base))) (i32.const 10)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (local.set $start (i32.add (local.get $start) (i32.const 1))))
          (else (br_if $other (i32.ne (local.get $b) (i32.const 10)))))
        (i32.store (i32.const {{RECORD_AT}}) (local.get $count))
        (i32.store (i32.const {{RECORD_END_AT}}) (local.get $start))
        (return (local.get $k))))
    (i32.const -1))

  ;; keyHash(at, len): a 64-bit hash of memory [at, at + len), to KEY_HASH_AT: xxHash64's round over
  ;; 8-byte words, the last 1-7 bytes as one more word with the bytes past the end masked off (the
  ;; window's 16 padding bytes keep that read inside it), the length mixed in, xxHash64's avalanche.
  (func $keyHash (param $at i32) (param $len i32)
    (local $end i32)
    (local $h i64)
    (local $w i64)
    (local.set $end (i32.add (local.get $at) (local.get $len)))
    (local.set $h
      (i64.xor (i64.const 0x27d4eb2f165667c5) (i64.extend_i32_u (local.get $len))))
    (block $done
      (loop $words
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $w (i64.load (local.get $at)))
        (if (i32.lt_u (i32.sub (local.get $end) (local.get $at)) (i32.const 8))
          (then
            (local.set $w
              (i64.and (local.get $w)
                (i64.sub
                  (i64.shl (i64.const 1)
                    (i64.extend_i32_u
                      (i32.shl (i32.sub (local.get $end) (local.get $at)) (i32.const 3))))
                  (i64.const 1))))))
        (local.set $h
          (i64.add
            (i64.mul
              (i64.rotl
                (i64.xor (local.get $h)
                  (i64.mul
                    (i64.rotl (i64.mul (local.get $w) (i64.const 0xc2b2ae3d27d4eb4f)) (i64.const 31))
                    (i64.const 0x9e3779b185ebca87)))
                (i64.const 27))
              (i64.const 0x9e3779b185ebca87))
            (i64.const 0x85ebca77c2b2ae63)))
        (local.set $at (i32.add (local.get $at) (i32.const 8)))
        (br $words)))
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 33)))
      (i64.const 0xc2b2ae3d27d4eb4f)))
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 29)))
      (i64.const 0x165667b19e3779f9)))
    (i64.store (i32.const {{KEY_HASH_AT}})
      (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 32)))))
)
