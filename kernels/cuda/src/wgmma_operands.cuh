// Operand lists of wgmma's fp32 accumulators for inline asm (which needs
// them literal): WGMMA_D<n> lists d[0] .. d[n-1] as "+f" operands (d a
// float array in the calling function), WGMMA_R<n> is the matching text
// "%0,...,%<n-1>" for the instruction's accumulator vector.  The other
// operands of an asm statement follow as %<n>, %<n+1>, ...
#pragma once

#define WGMMA_D8(o)                                                                                     \
  "+f"(d[o]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3]), "+f"(d[o + 4]), "+f"(d[o + 5]), "+f"(d[o + 6]), \
      "+f"(d[o + 7])
#define WGMMA_D16 WGMMA_D8(0), WGMMA_D8(8)
#define WGMMA_D32 WGMMA_D16, WGMMA_D8(16), WGMMA_D8(24)
#define WGMMA_D64 WGMMA_D32, WGMMA_D8(32), WGMMA_D8(40), WGMMA_D8(48), WGMMA_D8(56)
#define WGMMA_D128 \
  WGMMA_D64, WGMMA_D8(64), WGMMA_D8(72), WGMMA_D8(80), WGMMA_D8(88), WGMMA_D8(96), WGMMA_D8(104), WGMMA_D8(112), \
      WGMMA_D8(120)

#define WGMMA_R16 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15"
#define WGMMA_R32 WGMMA_R16 "," "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define WGMMA_R64 \
  WGMMA_R32 "," "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47" "," \
  "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define WGMMA_R128 \
  WGMMA_R64 "," "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79" "," \
  "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95" "," \
  "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111" "," \
  "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
