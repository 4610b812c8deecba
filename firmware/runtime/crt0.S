/* Start-up for firmware on an Ethernet RISC-V core: sp and gp, .data copy (when its load address
 * differs), .tbss/.bss zeroing, TLS pointer, the exit/console mailbox, C++ constructors, main, then
 * the exit status. Every loop here runs between two linker symbols, so each is bounded by the
 * image's own size. */
    .section .text.start, "ax"
    .globl _start
    .type _start, @function
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, __stack_top
    la      tp, __tls_base

    /* Copy .data from its load address if it runs elsewhere. */
    la      a0, __data_load
    la      a1, __data_start
    la      a2, __data_end
    beq     a0, a1, 2f
1:  bgeu    a1, a2, 2f
    lw      t0, 0(a0)
    sw      t0, 0(a1)
    addi    a0, a0, 4
    addi    a1, a1, 4
    j       1b
2:
    /* Zero thread-local and ordinary bss. */
    la      a0, __tbss_start
    la      a1, __tbss_end
    call    zero_range
    la      a0, __bss_start
    la      a1, __bss_end
    call    zero_range

    /* The exit/console mailbox (console_exit.cpp): set up before anything can print. */
    call    fabric_exit_mailbox_open

    /* Static constructors. */
    la      s0, __init_array_start
    la      s1, __init_array_end
3:  bgeu    s0, s1, 4f
    lw      t0, 0(s0)
    jalr    t0
    addi    s0, s0, 4
    j       3b
4:
    li      a0, 0
    li      a1, 0
    call    main
    tail    _exit
    .size _start, . - _start

    .type zero_range, @function
zero_range:
    bgeu    a0, a1, 1f
    sw      zero, 0(a0)
    addi    a0, a0, 4
    j       zero_range
1:  ret
    .size zero_range, . - zero_range
