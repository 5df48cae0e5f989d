import type { LocalePack } from './en.js';

/**
 * Korean (한국어). No particle follows `{feature}`: the sentences put a noun after it ("{feature}
 * 이용"), since the value may be an identifier in Latin letters, whose final sound Korean cannot
 * know, or `thisFeature` ("이 기능"), whose particle is known. A particle after `{plan}` is written
 * "(으)로" for the same reason.
 */
const ko: LocalePack = {
  common: {
    loading: '불러오는 중…',
    error: '사용할 수 없음',
    notConnected: 'Marketplace에 연결되지 않음',
    failed: '문제가 발생했습니다. 다시 시도하세요.',
  },
  'mp-gate': {
    loading: '접근 권한 확인 중…',
    thisFeature: '이 기능',
    unlocked: '잠금 해제됨',
    lockedHeading: '{feature} 잠금 해제',
    lockedText: '요금제를 업그레이드하면 {feature} 이용이 가능합니다.',
    lockedPlanText: '{plan} 요금제에 포함되어 있습니다.',
    expiredHeading: '{current} 요금제가 만료되었습니다',
    cancelledHeading: '{current} 요금제가 해지되었습니다',
    expiredText: '요금제를 갱신하면 {feature} 이용을 다시 시작할 수 있습니다.',
    ended: '종료일: {date}',
    pastDueHeading: '결제 기한 초과',
    pastDueText: '결제 정보를 업데이트하면 {feature} 이용을 계속할 수 있습니다.',
    overQuotaHeading: '사용 한도 도달',
    overQuotaText: 'API 호출 {limit}회 중 {used}회를 사용했습니다. 한도를 늘리려면 업그레이드하세요.',
    signedOutHeading: '{feature} 이용을 위해 로그인하세요',
    signedOutText: 'Marketplace 계정으로 로그인하세요.',
    errorHeading: '접근 권한을 확인할 수 없습니다',
    errorText: '다시 시도하세요.',
    refusedText: 'Marketplace 대시보드에서 이 앱을 여세요.',
    upgrade: '업그레이드',
    renew: '갱신',
    updatePayment: '결제 정보 업데이트',
    signIn: '로그인',
    retry: '다시 시도',
  },
  'mp-upgrade-button': {
    label: '업그레이드',
    planLabel: '{plan}(으)로 업그레이드',
    busy: '요금제 여는 중…',
    current: '현재 요금제',
    renew: '{plan} 갱신',
    updatePayment: '결제 정보 업데이트',
    upgraded: '업그레이드 완료',
    dismissed: '요금제가 변경되지 않았습니다',
    failed: '요금제를 열 수 없습니다. 다시 시도하세요.',
  },
  'mp-usage-meter': {
    label: 'API 호출',
    value: '{used} / {limit}',
    warningText: '한도에 가까워지고 있습니다({percent})',
    exceededText: '한도 도달',
    okText: '한도 내로 돌아왔습니다({used} / {limit})',
    none: '사용량 데이터 없음',
    signedOut: '사용량을 보려면 로그인하세요',
  },
  'mp-plan-badge': {
    active: '활성',
    trialing: '체험 중',
    past_due: '결제 기한 초과',
    cancelled: '해지됨',
    expired: '만료됨',
    none: '요금제 없음',
    signedOut: '로그인하지 않음',
    until: '{date}까지',
  },
  'mp-user-badge': {
    signedOut: '로그인하지 않음',
  },
  'mp-sign-in-button': {
    label: 'Marketplace로 로그인',
    busy: '로그인 중…',
    failed: '로그인을 시작할 수 없습니다. 다시 시도하세요.',
  },
};
export default ko;
