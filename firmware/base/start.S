/* Base firmware start-up. The reset PC is 0: one jump to the boot code in ERISC_CODE, so the words
 * at 0x4..0x1F (the heartbeat at 0x1C among them) stay free. The boot code sets the base firmware's
 * stack (the reserved bottom of local data RAM), zeroes .bss (a loop between two linker symbols,
 * bounded by the image) and enters base_fw_main, which never returns. gp and tp are not used
 * (no-relax link, no small data, no TLS): the context-switch entry runs with the application's. */
    .section .text.vector, "ax"
    .globl _start
    .type _start, @function
_start:
    j       boot
    .size _start, . - _start

    .section .text.boot, "ax"
    .type boot, @function
boot:
    la      sp, __base_stack_top
    la      a0, __bss_start
    la      a1, __bss_end
1:  bgeu    a0, a1, 2f
    sw      zero, 0(a0)
    addi    a0, a0, 4
    j       1b
2:  call    base_fw_main
    /* base_fw_main does not return; if it ever did, stop where the host can see it. */
    ebreak
    .size boot, . - boot
