import type { LocalePack } from './en.js';

/**
 * Arabic (العربية), written right to left. The counted noun after `{limit}` takes Arabic's six
 * plural forms: singular for 0, 1 and from 100, dual for 2, plural for 3–10, accusative singular for 11–99.
 */
const ar: LocalePack = {
  common: {
    loading: 'جارٍ التحميل…',
    error: 'غير متاح',
    notConnected: 'غير متصل بـ Marketplace',
    failed: 'لم تنجح العملية. يُرجى المحاولة مرة أخرى.',
  },
  'mp-gate': {
    loading: 'جارٍ التحقق من صلاحية الوصول…',
    thisFeature: 'هذه الميزة',
    unlocked: 'تم إلغاء القفل',
    lockedHeading: 'إلغاء قفل {feature}',
    lockedText: 'قم بترقية خطتك لاستخدام {feature}.',
    lockedPlanText: 'متاح في خطة {plan}.',
    expiredHeading: 'انتهت صلاحية خطة {current}',
    cancelledHeading: 'تم إلغاء خطة {current}',
    expiredText: 'جدّد خطتك لاستخدام {feature} مرة أخرى.',
    ended: 'انتهت في {date}',
    pastDueHeading: 'تأخر السداد',
    pastDueText: 'حدّث بيانات الدفع لمواصلة استخدام {feature}.',
    overQuotaHeading: 'تم بلوغ حد الاستخدام',
    overQuotaText: {
      zero: 'استخدمت {used} من أصل {limit} استدعاء لواجهة API. قم بالترقية للحصول على حد أعلى.',
      one: 'استخدمت {used} من أصل {limit} استدعاء لواجهة API. قم بالترقية للحصول على حد أعلى.',
      two: 'استخدمت {used} من أصل {limit} استدعاءين لواجهة API. قم بالترقية للحصول على حد أعلى.',
      few: 'استخدمت {used} من أصل {limit} استدعاءات لواجهة API. قم بالترقية للحصول على حد أعلى.',
      many: 'استخدمت {used} من أصل {limit} استدعاءً لواجهة API. قم بالترقية للحصول على حد أعلى.',
      other: 'استخدمت {used} من أصل {limit} استدعاء لواجهة API. قم بالترقية للحصول على حد أعلى.',
    },
    signedOutHeading: 'سجّل الدخول لاستخدام {feature}',
    signedOutText: 'سجّل الدخول بحسابك في Marketplace.',
    errorHeading: 'تعذّر التحقق من صلاحية وصولك',
    errorText: 'يُرجى المحاولة مرة أخرى.',
    refusedText: 'افتح هذا التطبيق من لوحة تحكم Marketplace.',
    upgrade: 'ترقية',
    renew: 'تجديد',
    updatePayment: 'تحديث بيانات الدفع',
    signIn: 'تسجيل الدخول',
    retry: 'إعادة المحاولة',
  },
  'mp-upgrade-button': {
    label: 'ترقية',
    planLabel: 'الترقية إلى {plan}',
    busy: 'جارٍ فتح الخطط…',
    current: 'الخطة الحالية',
    renew: 'تجديد {plan}',
    updatePayment: 'تحديث بيانات الدفع',
    upgraded: 'اكتملت الترقية',
    dismissed: 'لم تتغير خطتك',
    failed: 'تعذّر فتح الخطط. حاول مرة أخرى.',
  },
  'mp-usage-meter': {
    label: 'استدعاءات API',
    value: '{used} من {limit}',
    warningText: 'أوشكت على بلوغ الحد ({percent})',
    exceededText: 'تم بلوغ الحد',
    okText: 'عدت ضمن الحد ({used} من {limit})',
    none: 'لا توجد بيانات استخدام',
    signedOut: 'سجّل الدخول لعرض استخدامك',
  },
  'mp-plan-badge': {
    active: 'نشطة',
    trialing: 'تجريبية',
    past_due: 'متأخرة الدفع',
    cancelled: 'ملغاة',
    expired: 'منتهية',
    none: 'لا توجد خطة',
    signedOut: 'لم يتم تسجيل الدخول',
    until: 'حتى {date}',
  },
  'mp-user-badge': {
    signedOut: 'لم يتم تسجيل الدخول',
  },
  'mp-sign-in-button': {
    label: 'تسجيل الدخول باستخدام Marketplace',
    busy: 'جارٍ تسجيل الدخول…',
    failed: 'تعذّر بدء تسجيل الدخول. حاول مرة أخرى.',
  },
};
export default ar;
