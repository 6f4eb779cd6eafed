/**
 * Browser-side checks and niceties of the payment form (the server checks everything again;
 * the page works without them): Luhn and expiry checks, card number grouping, expiry slash,
 * one submit at a time.
 */
export const PAGE_JS = `(function(){
var f=document.querySelector('form.card');if(!f)return;
var num=document.getElementById('card_number'),exp=document.getElementById('card_expiry'),cvc=document.getElementById('card_cvc');
var ru=document.documentElement.lang==='ru';
function luhn(d){var s=0;for(var i=0;i<d.length;i++){var n=+d[d.length-1-i];if(i%2){n*=2;if(n>9)n-=9}s+=n}return s%10===0}
if(num){num.addEventListener('input',function(){var d=num.value.replace(/\\D/g,'').slice(0,19);num.value=d.replace(/(\\d{4})(?=\\d)/g,'$1 ');
 num.setCustomValidity(d.length>=12&&!luhn(d)?(ru?'Проверьте номер карты':'Check the card number'):'')});}
if(exp){exp.addEventListener('input',function(e){var d=exp.value.replace(/\\D/g,'').slice(0,4);if(e.inputType&&e.inputType.indexOf('delete')===0){exp.setCustomValidity('');return}
 exp.value=d.length>=3?d.slice(0,2)+'/'+d.slice(2):d.length===2?d+'/':d;
 var m=+d.slice(0,2),y=2000+ +d.slice(2),now=new Date(),bad=d.length===4&&(m<1||m>12||y*12+m<now.getFullYear()*12+now.getMonth()+1);
 exp.setCustomValidity(bad?(ru?'Срок действия истёк или неверен':'The card has expired or the date is wrong'):'')});}
if(cvc){cvc.addEventListener('input',function(){cvc.value=cvc.value.replace(/\\D/g,'').slice(0,3)})}
var busy=false;f.addEventListener('submit',function(e){if(busy){e.preventDefault();return}busy=true;
 var b=e.submitter;if(b){setTimeout(function(){b.disabled=true},0)}
});
})();`;
