import type { LocalePack } from './en.js';

/**
 * Hebrew (עברית), written right to left, addressing the user in the plural, as Hebrew interfaces
 * do to stay gender-neutral. `{feature}` follows "את" or "אל", never a one-letter prefix, which
 * an identifier in Latin letters could not take.
 */
const he: LocalePack = {
  common: {
    loading: 'בטעינה…',
    error: 'לא זמין',
    notConnected: 'אין חיבור ל-Marketplace',
    failed: 'הפעולה לא הצליחה. נסו שוב.',
  },
  'mp-gate': {
    loading: 'בודקים את הגישה…',
    thisFeature: 'התכונה הזו',
    unlocked: 'הנעילה הוסרה',
    lockedHeading: 'פתיחת {feature}',
    lockedText: 'שדרגו את התוכנית כדי לקבל גישה אל {feature}.',
    lockedPlanText: 'כלול בתוכנית {plan}.',
    expiredHeading: 'תוקף התוכנית {current} שלכם פג',
    cancelledHeading: 'התוכנית {current} שלכם בוטלה',
    expiredText: 'חדשו את התוכנית כדי לקבל שוב גישה אל {feature}.',
    ended: 'תאריך סיום: {date}',
    pastDueHeading: 'התשלום באיחור',
    pastDueText: 'עדכנו את פרטי התשלום כדי להמשיך לקבל גישה אל {feature}.',
    overQuotaHeading: 'הגעתם למגבלת השימוש',
    overQuotaText: {
      one: 'השתמשתם ב-{used} מתוך {limit} קריאת API. שדרגו כדי לקבל מגבלה גבוהה יותר.',
      other: 'השתמשתם ב-{used} מתוך {limit} קריאות API. שדרגו כדי לקבל מגבלה גבוהה יותר.',
    },
    signedOutHeading: 'התחברו כדי לקבל גישה אל {feature}',
    signedOutText: 'התחברו עם החשבון שלכם ב-Marketplace.',
    errorHeading: 'לא הצלחנו לבדוק את הגישה שלכם',
    errorText: 'נסו שוב.',
    refusedText: 'פתחו את האפליקציה הזו מלוח הבקרה של Marketplace.',
    upgrade: 'שדרוג',
    renew: 'חידוש',
    updatePayment: 'עדכון התשלום',
    signIn: 'התחברות',
    retry: 'ניסיון נוסף',
  },
  'mp-upgrade-button': {
    label: 'שדרוג',
    planLabel: 'שדרוג ל-{plan}',
    busy: 'פותחים את התוכניות…',
    current: 'התוכנית הנוכחית',
    renew: 'חידוש {plan}',
    updatePayment: 'עדכון התשלום',
    upgraded: 'השדרוג הושלם',
    dismissed: 'התוכנית שלכם לא השתנתה',
    failed: 'לא הצלחנו לפתוח את התוכניות. נסו שוב.',
  },
  'mp-usage-meter': {
    label: 'קריאות API',
    value: '{used} מתוך {limit}',
    warningText: 'אתם מתקרבים למגבלה ({percent})',
    exceededText: 'הגעתם למגבלה',
    okText: 'חזרתם לטווח המגבלה ({used} מתוך {limit})',
    none: 'אין נתוני שימוש',
    signedOut: 'התחברו כדי לראות את השימוש שלכם',
  },
  'mp-plan-badge': {
    active: 'פעילה',
    trialing: 'תקופת ניסיון',
    past_due: 'תשלום באיחור',
    cancelled: 'בוטלה',
    expired: 'פג תוקף',
    none: 'אין תוכנית',
    signedOut: 'לא בוצעה התחברות',
    until: 'עד {date}',
  },
  'mp-user-badge': {
    signedOut: 'לא בוצעה התחברות',
  },
  'mp-sign-in-button': {
    label: 'התחברות עם Marketplace',
    busy: 'מתחברים…',
    failed: 'לא הצלחנו להתחיל את ההתחברות. נסו שוב.',
  },
};
export default he;
