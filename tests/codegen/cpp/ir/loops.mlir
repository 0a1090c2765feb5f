// Loops whose carried values depend on each other: Fibonacci numbers with two loop-carried
// values, and a while loop whose condition needs a statement (an L1 read) and passes on a
// value other than its own argument; then an else branch that computes a named value before
// its nested if. Results go to L1 words 0, 1 and 2 of the scratch buffer.
func.func @loops() attributes {ttkernel.thread = "noc"} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %n = ttkernel.get_arg_val(%c0) : (i32) -> i32
  %filled = ttkernel.get_arg_val(%c1) : (i32) -> i32
  %scratch = ttkernel.get_arg_val(%c2) : (i32) -> i32
  %fib:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0, %b = %c1) -> (i32, i32) : i32 {
    %0 = arith.addi %a, %b : i32
    scf.yield %b, %0 : i32, i32
  }
  ttkernel.l1_store(%scratch, %c0, %fib#0) {width = 32 : i32} : i32, i32, i32
  scf.for %j = %c2 to %filled step %c1 : i32 {
    ttkernel.l1_store(%scratch, %j, %c1) {width = 32 : i32} : i32, i32, i32
  }
  %first_zero = scf.while (%k = %c2) : (i32) -> i32 {
    %word = ttkernel.l1_load(%scratch, %k) {width = 32 : i32} : (i32, i32) -> i32
    %1 = arith.cmpi ne, %word, %c0 : i32
    %2 = arith.addi %k, %c1 : i32
    %3 = arith.select %1, %2, %k : i32
    scf.condition(%1) %3 : i32
  } do {
  ^bb0(%next: i32):
    scf.yield %next : i32
  }
  ttkernel.l1_store(%scratch, %c1, %first_zero) {width = 32 : i32} : i32, i32, i32
  %4 = arith.cmpi eq, %n, %c0 : i32
  %choice = scf.if %4 -> (i32) {
    %c10 = arith.constant 10 : i32
    scf.yield %c10 : i32
  } else {
    %twice = arith.muli %n, %c2 : i32
    %c3 = arith.constant 3 : i32
    %5 = arith.cmpi ugt, %twice, %c3 : i32
    %6 = scf.if %5 -> (i32) {
      scf.yield %twice : i32
    } else {
      scf.yield %c1 : i32
    }
    scf.yield %6 : i32
  }
  ttkernel.l1_store(%scratch, %c2, %choice) {width = 32 : i32} : i32, i32, i32
  func.return
}
