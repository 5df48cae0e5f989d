import { html } from 'lit';
import { MarketplaceElement } from 'marketplace-app-kit/elements';
class MpTrialBanner extends MarketplaceElement {
    static defaultStrings = { ...MarketplaceElement.defaultStrings, ends: 'Your trial ends {date}' };
    render() {
        return html `<p>${this._t('ends', { date: this._date(this._kit?.entitlement?.expires_at) })}</p>`;
    }
}
customElements.define('mp-trial-banner', MpTrialBanner);
