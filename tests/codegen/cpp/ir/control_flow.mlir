// Structured control flow in one data-movement kernel: a loop-carried sum, an if / else if /
// else with a result, a while loop whose body swaps its two carried values, an L1 word
// read and written through a pointer, and a semaphore multicast to a rectangle of cores.
func.func @control_flow() attributes {ttkernel.thread = "noc"} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %c7 = arith.constant 7 : i32
  %n = ttkernel.get_arg_val(%c0) : (i32) -> i32
  %limit = ttkernel.get_arg_val(%c1) : (i32) -> i32
  %scratch = ttkernel.get_arg_val(%c2) : (i32) -> i32
  %total = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
    %0 = arith.remui %i, %c3 : i32
    %1 = arith.cmpi eq, %0, %c0 : i32
    %step = scf.if %1 -> (i32) {
      %2 = arith.muli %i, %c7 : i32
      scf.yield %2 : i32
    } else {
      %3 = arith.cmpi eq, %0, %c1 : i32
      %4 = scf.if %3 -> (i32) {
        %5 = arith.shli %i, %c2 : i32
        %6 = arith.ori %5, %c1 : i32
        scf.yield %6 : i32
      } else {
        %7 = arith.subi %c0, %i : i32
        %8 = arith.divsi %7, %c2 : i32
        scf.yield %8 : i32
      }
      scf.yield %4 : i32
    }
    %9 = arith.addi %acc, %step : i32
    scf.yield %9 : i32
  }
  %lo, %hi = scf.while (%a = %c0, %b = %total) : (i32, i32) -> (i32, i32) {
    %10 = arith.cmpi ult, %a, %limit : i32
    scf.condition(%10) %a, %b : i32, i32
  } do {
  ^bb0(%a1: i32, %b1: i32):
    %11 = arith.addi %a1, %c1 : i32
    scf.yield %b1, %11 : i32, i32
  }
  %old = ttkernel.l1_load(%scratch, %c0) {width = 32 : i32} : (i32, i32) -> i32
  %12 = arith.addi %old, %lo : i32
  %13 = arith.xori %12, %hi : i32
  ttkernel.l1_store(%scratch, %c1, %13) {width = 32 : i32} : i32, i32, i32
  %x = ttkernel.my_x() : i32
  %y = ttkernel.my_y() : i32
  %sem_addr = ttkernel.get_semaphore(%c0) : (i32) -> i32
  ttkernel.noc_semaphore_set(%sem_addr, %c1) : i32, i32
  %14 = arith.addi %x, %c3 : i32
  %15 = arith.addi %y, %c3 : i32
  %mcast = ttkernel.get_noc_multicast_addr(%x, %y, %14, %15, %sem_addr) : (i32, i32, i32, i32, i32) -> i64
  %16 = arith.constant 15 : i32
  %false = arith.constant false
  ttkernel.noc_semaphore_set_multicast(%sem_addr, %mcast, %16, %false) : i32, i64, i32, i1
  ttkernel.noc_semaphore_wait(%sem_addr, %c1) : i32, i32
  func.return
}
