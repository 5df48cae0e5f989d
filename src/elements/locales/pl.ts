import type { LocalePack } from './en.js';

/**
 * Polish (polski). `{feature}` stands where the accusative goes ("odblokować tę funkcję"), so that
 * `thisFeature` fits every sentence. After "z", one call is "wywołania", any other count "wywołań".
 */
const pl: LocalePack = {
  common: {
    loading: 'Ładowanie…',
    error: 'Niedostępne',
    notConnected: 'Brak połączenia z Marketplace',
    failed: 'Nie udało się. Spróbuj ponownie.',
  },
  'mp-gate': {
    loading: 'Sprawdzanie dostępu…',
    thisFeature: 'tę funkcję',
    unlocked: 'Odblokowano',
    lockedHeading: 'Odblokuj {feature}',
    lockedText: 'Przejdź na wyższy plan, aby odblokować {feature}.',
    lockedPlanText: 'Dostępne w planie {plan}.',
    expiredHeading: 'Twój plan {current} wygasł',
    cancelledHeading: 'Twój plan {current} został anulowany',
    expiredText: 'Odnów plan, aby ponownie odblokować {feature}.',
    ended: 'Wygasł {date}',
    pastDueHeading: 'Zaległa płatność',
    pastDueText: 'Zaktualizuj dane płatności, aby zachować {feature}.',
    overQuotaHeading: 'Osiągnięto limit wykorzystania',
    overQuotaText: {
      one: 'Wykorzystano {used} z {limit} wywołania API. Przejdź na wyższy plan, aby zwiększyć limit.',
      other: 'Wykorzystano {used} z {limit} wywołań API. Przejdź na wyższy plan, aby zwiększyć limit.',
    },
    signedOutHeading: 'Zaloguj się, aby odblokować {feature}',
    signedOutText: 'Zaloguj się na konto Marketplace.',
    errorHeading: 'Nie udało się sprawdzić dostępu',
    errorText: 'Spróbuj ponownie.',
    refusedText: 'Otwórz tę aplikację z panelu Marketplace.',
    upgrade: 'Ulepsz plan',
    renew: 'Odnów',
    updatePayment: 'Zaktualizuj płatność',
    signIn: 'Zaloguj się',
    retry: 'Spróbuj ponownie',
  },
  'mp-upgrade-button': {
    label: 'Ulepsz plan',
    planLabel: 'Przejdź na plan {plan}',
    busy: 'Otwieranie planów…',
    current: 'Bieżący plan',
    renew: 'Odnów plan {plan}',
    updatePayment: 'Zaktualizuj płatność',
    upgraded: 'Zmieniono plan',
    dismissed: 'Plan nie został zmieniony',
    failed: 'Nie udało się otworzyć planów. Spróbuj ponownie.',
  },
  'mp-usage-meter': {
    label: 'Wywołania API',
    value: '{used} z {limit}',
    warningText: 'Zbliżasz się do limitu ({percent})',
    exceededText: 'Osiągnięto limit',
    okText: 'Ponownie w ramach limitu ({used} z {limit})',
    none: 'Brak danych o wykorzystaniu',
    signedOut: 'Zaloguj się, aby zobaczyć wykorzystanie',
  },
  'mp-plan-badge': {
    active: 'Aktywny',
    trialing: 'Okres próbny',
    past_due: 'Zaległa płatność',
    cancelled: 'Anulowany',
    expired: 'Wygasły',
    none: 'Brak planu',
    signedOut: 'Nie zalogowano',
    until: 'do {date}',
  },
  'mp-user-badge': {
    signedOut: 'Nie zalogowano',
  },
  'mp-sign-in-button': {
    label: 'Zaloguj się przez Marketplace',
    busy: 'Logowanie…',
    failed: 'Nie udało się rozpocząć logowania. Spróbuj ponownie.',
  },
};
export default pl;
